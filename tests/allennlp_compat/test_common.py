"""``allennlp.common`` as users call it: ``Params``, ``cached_path``, the ``util`` helpers, the checks, the registry's
AllenNLP names, AllenNLP's plugin files, and ``overrides`` 3.1.0 over distrain's base classes."""

from __future__ import annotations

import random
import tarfile

import numpy
import pytest
import torch

from distrain.allennlp.common import ConfigurationError, Params, Registrable
from distrain.allennlp.common.checks import check_dimensions_match
from distrain.allennlp.common.file_utils import FileUnavailable, cached_path, text_lines_from_file
from distrain.allennlp.common.util import (ensure_list, group_by_count, lazy_groups_of, namespace_match,
                                           pad_sequence_to_length, prepare_environment)
from distrain.errors import BadInput
from distrain.plugins import allennlp_plugin_names
from distrain.registry import RegistryError


def test_params_pop_their_values_and_name_where_a_missing_key_was():
    params = Params({"model": {"type": "x", "dim": "3", "rate": "0.5", "on": "true", "layers": [{"size": 2}],
                               "none": "None"}})
    model = params.pop("model")
    assert isinstance(model, Params) and model.history == "model."
    assert (model.pop_int("dim"), model.pop_float("rate"), model.pop_bool("on")) == (3, 0.5, True)
    assert model.pop("none") is None and model.pop("absent", 7) == 7
    layers = model.pop("layers")
    assert isinstance(layers[0], Params) and layers[0].history == "model.layers.0."
    with pytest.raises(ConfigurationError, match='^key "hidden" is required at location "model."$'):
        model.pop("hidden")
    copy = model.duplicate()
    assert model.pop_choice("type", ["x", "y"]) == "x" and copy["type"] == "x"
    with pytest.raises(ConfigurationError, match=r"^z not in acceptable choices for model.kind: \['x', 'y'\]"):
        Params({"kind": "z"}, history="model.").pop_choice("kind", ["x", "y"])
    assert Params({}).pop_choice("kind", ["x", "y"], default_to_first_choice=True) == "x"
    with pytest.raises(ConfigurationError, match=r"^Extra parameters passed to Thing: \{'left': 1\}$"):
        Params({"left": 1}).assert_empty("Thing")
    with pytest.raises(ValueError, match="Cannot convert variable to bool: maybe"):
        Params({"b": "maybe"}).pop_bool("b")


def test_params_read_jsonnet_with_overrides_and_flatten(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBEDDING_DIM", "12")
    path = tmp_path / "config.jsonnet"
    path.write_text('local dim = std.parseInt(std.extVar("EMBEDDING_DIM")); '
                    '{model: {type: "m", dim: dim, encoder: {type: "lstm"}}, trainer: {num_epochs: 3}}')
    params = Params.from_file(path, '{"trainer.num_epochs": 1, "model": {"encoder": {"type": "gru"}}}')
    assert params.as_dict() == {"model": {"type": "m", "dim": 12, "encoder": {"type": "gru"}},
                                "trainer": {"num_epochs": 1}}
    assert params.as_flat_dict() == {"model.type": "m", "model.dim": 12, "model.encoder.type": "gru",
                                     "trainer.num_epochs": 1}
    assert Params.from_file(path, {"model.dim": 4}, ext_vars={"EMBEDDING_DIM": "2"})["model"]["dim"] == 4
    assert Params({"a": "1", "b": ["2.5", "false"]}).as_dict(infer_type_and_cast=True) == {"a": 1, "b": [2.5, False]}
    with pytest.raises(ConfigurationError, match="config file not found"):
        Params.from_file(tmp_path / "missing.jsonnet")


def test_cached_path_gives_local_files_and_refuses_remote_ones_in_one_line(tmp_path, monkeypatch):
    data = tmp_path / "data.txt"
    data.write_text(" one \ntwo\n")
    assert cached_path(data) == str(data)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cached_path("~/data.txt") == str(data)
    assert cached_path("package://distrain/allennlp/common/params.py").endswith("distrain/allennlp/common/params.py")
    assert list(text_lines_from_file(data)) == ["one", "two"]
    for url in ("https://example.org/data.txt", "s3://bucket/data.txt", "hf://org/model/file"):
        with pytest.raises(FileUnavailable, match=f"^{url}: remote files are not fetched"):
            cached_path(url)
    with pytest.raises(FileNotFoundError, match="not found"):
        cached_path(tmp_path / "missing.txt")
    assert issubclass(FileUnavailable, BadInput)  # a command reports it as one line, exit 2
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(data, arcname="inner/data.txt")
    extracted = cached_path(f"{archive}!inner/data.txt", cache_dir=tmp_path / "cache", extract_archive=True)
    assert open(extracted).read() == " one \ntwo\n" and extracted.startswith(str(tmp_path / "cache"))
    with pytest.raises(FileUnavailable, match="needs extract_archive=True"):
        cached_path(f"{archive}!inner/data.txt")


def test_the_util_helpers_behave_as_allennlps():
    assert list(lazy_groups_of(iter(range(7)), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert group_by_count([1, 2, 3, 4, 5], 2, 0) == [[1, 2], [3, 4], [5, 0]]
    assert pad_sequence_to_length([1, 2, 3], 5) == [1, 2, 3, 0, 0]
    assert pad_sequence_to_length([1, 2, 3], 2) == [1, 2]
    assert pad_sequence_to_length([1, 2, 3], 2, padding_on_right=False) == [2, 3]
    assert pad_sequence_to_length([1], 3, default_value=lambda: -1, padding_on_right=False) == [-1, -1, 1]
    assert namespace_match("*tags", "ner_tags") and namespace_match("tokens", "tokens")
    assert not namespace_match("tokens", "stemmed_tokens")
    items = [1, 2]
    assert ensure_list(items) is items and ensure_list(iter(items)) == items
    draws = []
    for _ in range(2):
        prepare_environment(Params({"random_seed": 1, "numpy_seed": 2, "pytorch_seed": 3}))
        draws.append((random.random(), numpy.random.rand(), torch.rand(1).item()))
    assert draws[0] == draws[1]


def test_check_dimensions_match_is_a_configuration_error_naming_both():
    check_dimensions_match(4, 4, "embedding dim", "encoder input dim")
    with pytest.raises(ConfigurationError, match="^embedding dim must match encoder input dim, but got 4 and 5"):
        check_dimensions_match(4, 5, "embedding dim", "encoder input dim")


class Shape(Registrable):
    pass


@Shape.register("square")
class Square(Shape):
    pass


def test_the_registry_answers_allennlps_class_methods():
    assert Shape.resolve_class_name("square") == (Square, None)
    assert Shape.by_name("square") is Square and "square" in Shape.list_available()
    assert Shape.resolve_class_name(f"{__name__}.Square") == (Square, None)
    with pytest.raises(RegistryError, match='constructor="from_sides"'):
        Shape.register("rectangle", constructor="from_sides")


def test_allennlp_plugin_files_are_read_as_allennlp_reads_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert allennlp_plugin_names() == []
    (tmp_path / ".allennlp_plugins").write_text("  first_plugin  \n\nsecond.plugin\nfirst_plugin\n")
    (tmp_path / "home" / ".allennlp").mkdir(parents=True)
    (tmp_path / "home" / ".allennlp" / "plugins").write_text("second.plugin\nglobal_plugin\n")
    assert allennlp_plugin_names() == ["first_plugin", "second.plugin", "global_plugin"]


#: a user's module, as AllenNLP users write them (classes at module level: overrides 3.1.0 reads the class
#: statement's bytecode, and on Python 3.11 it cannot read a class defined inside a function)
USER_MODULE = """
from overrides import overrides
from allennlp.data import DatasetReader
from allennlp.models import Model
from allennlp.predictors import Predictor

class Reader(DatasetReader):
    @overrides
    def _read(self, file_path):
        yield from ()

    @overrides
    def text_to_instance(self, text):
        return {}

class Classifier(Model):
    @overrides
    def forward(self, text):
        return {}

    @overrides
    def get_metrics(self, reset: bool = False):
        return {}

    @overrides
    def make_output_human_readable(self, output_dict):
        return output_dict

class Reads(Predictor):
    @overrides
    def _json_to_instance(self, json_dict):
        return {}
"""

MISSPELT = """
from overrides import overrides
from allennlp.data import DatasetReader

class Misspelt(DatasetReader):
    @overrides
    def text_to_instances(self, text):
        return {}
"""


def test_overrides_3_1_0_passes_methods_distrains_base_classes_have_and_catches_others():
    from importlib.metadata import version

    from distrain.compat import allennlp_imports

    assert version("overrides") == "3.1.0"  # the allennlp extra's pin, as AllenNLP 2.8 installed it
    allennlp_imports.install()
    namespace: dict = {"__name__": "user_module"}
    exec(compile(USER_MODULE, "user_module.py", "exec"), namespace)
    assert namespace["Classifier"].forward.__override__
    with pytest.raises(AssertionError, match='No super class method found for "text_to_instances"'):
        exec(compile(MISSPELT, "misspelt.py", "exec"), {"__name__": "misspelt"})
