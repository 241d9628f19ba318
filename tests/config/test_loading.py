"""A config file, ``--ext-var`` and ``--overrides`` turned into one dict (:mod:`distrain.config.loading`), in this
process: what the CLI tests check through ``distrain check``, one rule at a time."""

from __future__ import annotations

import json

import pytest

from distrain.config.errors import ConfigError, join_path
from distrain.config.loading import (apply_overrides, evaluate_jsonnet, json_object_argument, load_config,
                                     parse_ext_vars, parse_overrides)
from distrain.errors import UsageError


def write(tmp_path, text: str, name: str = "config.jsonnet"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_jsonnet_file_sees_the_environment_and_the_ext_vars_the_ext_vars_winning(tmp_path, monkeypatch):
    monkeypatch.setenv("DISTRAIN_TEST_SEEN", "from the environment")
    monkeypatch.setenv("DISTRAIN_TEST_BOTH", "environment")
    path = write(tmp_path, '{a: std.extVar("DISTRAIN_TEST_SEEN"), b: std.extVar("DISTRAIN_TEST_BOTH"), c: 1 + 2}')
    assert evaluate_jsonnet(path, {"DISTRAIN_TEST_BOTH": "flag"}) == {"a": "from the environment", "b": "flag", "c": 3}
    assert evaluate_jsonnet(path)["b"] == "environment"


def test_an_environment_variable_that_is_no_identifier_is_left_out(tmp_path, monkeypatch):
    monkeypatch.setenv("DISTRAIN-TEST-DASHED", "x")  # jsonnet refuses such names; distrain passes none of them
    monkeypatch.setenv("_DISTRAIN_TEST_9", "kept")
    assert evaluate_jsonnet(write(tmp_path, '{a: std.extVar("_DISTRAIN_TEST_9")}')) == {"a": "kept"}


def test_a_missing_file_a_syntax_error_an_undefined_variable_and_a_non_object_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"^config file not found: .*absent\.jsonnet$"):
        evaluate_jsonnet(tmp_path / "absent.jsonnet")
    with pytest.raises(ConfigError) as syntax:
        evaluate_jsonnet(write(tmp_path, "{a: 1,,}", "syntax.jsonnet"))
    assert str(syntax.value).startswith("jsonnet syntax error at ") and "syntax.jsonnet:1" in str(syntax.value)
    assert "\n" not in str(syntax.value)
    with pytest.raises(ConfigError) as undefined:
        evaluate_jsonnet(write(tmp_path, '{\n  a: std.extVar("DISTRAIN_TEST_NEVER_SET"),\n}', "runtime.jsonnet"))
    message = str(undefined.value)
    assert message.startswith("jsonnet error at ") and "runtime.jsonnet:2" in message and "\n" not in message
    assert "DISTRAIN_TEST_NEVER_SET" in message.partition(": ")[2]
    with pytest.raises(ConfigError, match=r"list\.jsonnet: the config must evaluate to an object, got list$"):
        evaluate_jsonnet(write(tmp_path, "[1, 2]", "list.jsonnet"))


def test_ext_var_pairs_split_at_the_first_equals_sign():
    assert parse_ext_vars(["A=1", "B=x=y", "C="]) == {"A": "1", "B": "x=y", "C": ""}
    assert parse_ext_vars([]) == {}
    for bad in ("A", "=1"):
        with pytest.raises(UsageError, match=f"--ext-var '{bad}': expected KEY=VALUE"):
            parse_ext_vars([bad])


def test_a_json_object_flag_names_itself_when_it_is_not_one():
    assert json_object_argument(None, "--flag") == {} and json_object_argument("", "--flag") == {}
    assert json_object_argument('{"a": [1]}', "--flag") == {"a": [1]}
    with pytest.raises(ConfigError, match=r"^--flag: not valid JSON \(Expecting value at column 7\)$"):
        json_object_argument('{"a": }', "--flag")
    with pytest.raises(ConfigError, match=r"^--flag: expected a JSON object$"):
        json_object_argument("[1]", "--flag")
    with pytest.raises(ConfigError, match=r"^--overrides: expected a JSON object$"):
        parse_overrides('"text"')


def test_overrides_merge_objects_replace_the_rest_and_null_removes_a_key():
    config = {"trainer": {"lr": 0.1, "epochs": 3, "optimizer": {"type": "sgd", "momentum": 0.9}}, "seed": 1,
              "model": "a"}
    merged = apply_overrides(config, {
        "trainer.lr": 0.5,  # a dotted path
        "trainer": {"optimizer": {"type": "adam"}, "optimizer.betas": [0.8, 0.9]},  # objects merge, dotted inside too
        "seed": None,  # removed: the default applies
        "model": {"type": "b"},  # an object replaces a plain value
        "data.path": "x.jsonl",  # missing parents are made
        "absent": None,  # removing what is not there is nothing
    })
    assert merged == {"trainer": {"lr": 0.5, "epochs": 3, "optimizer": {"type": "adam", "momentum": 0.9,
                                                                        "betas": [0.8, 0.9]}},
                      "model": {"type": "b"}, "data": {"path": "x.jsonl"}}
    assert config["trainer"]["lr"] == 0.1 and config["seed"] == 1  # the given config is left as it was
    assert apply_overrides({"a": 1}, {"a.b": 2}) == {"a": {"b": 2}}  # a plain value on the way is replaced
    assert apply_overrides({"a": {"b": 1}}, {"a": 3}) == {"a": 3}


def test_load_config_takes_overrides_as_json_text_or_as_a_dict(tmp_path):
    path = write(tmp_path, '{trainer: {lr: 0.1, epochs: std.parseInt(std.extVar("DISTRAIN_TEST_EPOCHS"))}}')
    ext = {"DISTRAIN_TEST_EPOCHS": "4"}
    assert load_config(path, json.dumps({"trainer.lr": 1}), ext) == {"trainer": {"lr": 1, "epochs": 4}}
    assert load_config(path, {"trainer": {"epochs": None}}, ext) == {"trainer": {"lr": 0.1}}
    assert load_config(path, None, ext) == load_config(path, "", ext) == {"trainer": {"lr": 0.1, "epochs": 4}}


def test_key_paths_join_with_dots_and_indices_with_brackets():
    assert join_path("", "trainer") == "trainer"
    assert join_path("trainer", "optimizer") == "trainer.optimizer"
    assert join_path("trainer.optimizer.betas", 1) == "trainer.optimizer.betas[1]"
    assert join_path("", 0) == "[0]"
