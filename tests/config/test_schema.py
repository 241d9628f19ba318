"""``distrain schema``: a JSON Schema of every config, built from the registry, checked with jsonschema."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from support.cli import run_cli
from support.configs import write_config
from support.paths import ROOT


@pytest.fixture(scope="module")
def validator():
    from distrain.experiment.plan import experiment_schema
    from distrain.plugins import import_plugins

    import_plugins([])
    schema = experiment_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def example_configs() -> list[Path]:
    """Every training config in configs/ (``*_search.jsonnet`` files are search spaces for distrain tune)."""
    return sorted(path for path in (ROOT / "configs").glob("*.jsonnet") if not path.name.endswith("_search.jsonnet"))


@pytest.mark.parametrize("path", example_configs(), ids=lambda path: path.name)
def test_every_example_config_is_valid(validator, path):
    from distrain.config.loading import load_config

    config = load_config(str(path), None, {})
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(config)]
    assert not errors


GOOD = {
    "dataset_reader": {"type": "feature_classification_json"},
    "train_data_path": "train.jsonl",
    "model": {"type": "feedforward_classifier", "input_dim": 4, "feedforward": {"hidden_dims": [8]}},
    "data_loader": {"batch_size": 8},
    "trainer": {"optimizer": {"type": "adam", "lr": 0.01}, "num_epochs": 2, "callbacks": [{"type": "tensorboard"}]},
    "distributed": {"cuda_devices": [-1, -1]},
}

#: (what is wrong, dotted key to set or delete, value; None deletes) -> the key path check names
BAD = [
    ("a string learning rate", "trainer.optimizer.lr", "fast", "trainer.optimizer.lr"),
    ("a misspelled trainer key", "trainer.num_epohcs", 3, "trainer.num_epohcs"),
    ("an unknown model type", "model.type", "feedforward_clasifier", "model.type"),
    ("no training data", "train_data_path", None, "train_data_path"),
    ("a batch size given as a string", "data_loader.batch_size", "8", "data_loader.batch_size"),
    ("a device id below -1", "distributed.cuda_devices", [-2], "distributed.cuda_devices[0]"),
    ("a port above 65535", "distributed.master_port", 70000, "distributed.master_port"),
    ("an unknown amp dtype", "trainer.amp_dtype", "float8", "trainer.amp_dtype"),
    ("hidden sizes that are not a list", "model.feedforward.hidden_dims", "8", "model.feedforward.hidden_dims"),
    ("an unknown reader type", "dataset_reader.type", "csv", "dataset_reader.type"),
    ("a zero timeout", "distributed.timeout", 0, "distributed.timeout"),
    ("a misspelled top-level key", "modle", {}, "modle"),
    ("an unknown callback type", "trainer.callbacks", [{"type": "tensorbord"}], "trainer.callbacks[0].type"),
    ("shuffle given as a string", "data_loader.shuffle", "yes", "data_loader.shuffle"),
    ("an unknown backend", "distributed.backend", "mpi", "distributed.backend"),
]


def changed(config: dict, key: str, value) -> dict:
    config = copy.deepcopy(config)
    *parents, last = key.split(".")
    node = config
    for part in parents:
        node = node[part]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return config


def test_the_good_config_passes_both(validator, tmp_path):
    assert not list(validator.iter_errors(GOOD))
    from distrain.experiment.plan import resolve_experiment

    resolve_experiment(copy.deepcopy(GOOD))  # no ConfigError


@pytest.mark.parametrize("what,key,value,path", BAD, ids=[case[0] for case in BAD])
def test_a_bad_config_is_rejected_by_the_schema_and_by_check(validator, tmp_path, capsys, monkeypatch, what, key,
                                                            value, path):
    import os
    import tempfile

    from distrain.cli import main

    # main() sends the process's temporary files to a job folder of its own (runtime/scratch.py), removed at
    # exit: in this pytest process that would leak into every later test (and the commands they start)
    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)
    monkeypatch.setenv("TMPDIR", os.environ.get("TMPDIR", tempfile.gettempdir()))
    config = changed(GOOD, key, value)
    assert list(validator.iter_errors(config)), f"the schema accepts {what}"
    file = write_config(tmp_path / "bad.json", config)
    with pytest.raises(SystemExit) as exit_status:
        main(["check", str(file)])
    assert exit_status.value.code == 2
    assert f"{path}:" in capsys.readouterr().err


def test_constraints_defaults_and_docstrings_come_from_the_signatures(validator):
    defs = validator.schema["$defs"]
    port = defs["DistributedConfig"]["properties"]["master_port"]
    assert {"type": "integer", "minimum": 1, "maximum": 65535} in port["anyOf"]
    adam = defs["Optimizer.adam"]
    assert adam["properties"]["lr"] == {"type": "number", "minimum": 0, "default": 0.001}  # from NonNegativeFloat
    assert adam["properties"]["type"] == {"const": "adam"}
    assert defs["Model.feedforward_classifier"]["description"].startswith("Label logits from a dense feature vector")
    assert "adam" in defs["Optimizer"]["properties"]["type"]["anyOf"][0]["enum"]


def test_schema_command_writes_a_file_and_includes_a_plugin(tmp_path):
    plain = run_cli("schema", "-o", str(tmp_path / "plain.json"))
    assert plain.returncode == 0, plain.stderr
    with_plugin = run_cli("schema", "-o", str(tmp_path / "plugin.json"), "--include-package", "distrain_test_plugin")
    assert with_plugin.returncode == 0, with_plugin.stderr
    plain_defs = json.loads((tmp_path / "plain.json").read_text())["$defs"]
    plugin_defs = json.loads((tmp_path / "plugin.json").read_text())["$defs"]
    assert "Model.mean_embedding_classifier" not in plain_defs
    assert "Model.mean_embedding_classifier" in plugin_defs
    assert "mean_embedding_classifier" in plugin_defs["Model"]["properties"]["type"]["anyOf"][0]["enum"]
