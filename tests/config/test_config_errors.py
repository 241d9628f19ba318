"""Every kind of bad config is reported with its key path (or file:line), all at once, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import run_cli
from support.configs import text_config, write_config


def check(config_path: Path, *extra: str):
    return run_cli("check", str(config_path), *extra)


def test_wrong_value_type_names_the_key_path(tmp_path, text_data):
    config = text_config(text_data)
    config["trainer"]["optimizer"]["lr"] = "fast"
    result = check(write_config(tmp_path / "c.json", config))
    assert result.returncode == 2
    assert 'trainer.optimizer.lr: expected a number, got "fast"' in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_key_suggests_the_right_one(tmp_path, text_data):
    config = text_config(text_data)
    config["trainer"]["num_epohcs"] = 3
    result = check(write_config(tmp_path / "c.json", config))
    assert result.returncode == 2
    assert 'trainer.num_epohcs: unknown key; did you mean "num_epochs"?' in result.stderr


def test_unknown_type_suggests_and_lists_valid_names(tmp_path, text_data):
    config = text_config(text_data)
    config["model"]["type"] = "basic_clasifier"
    result = check(write_config(tmp_path / "c.json", config))
    assert result.returncode == 2
    assert 'model.type: unknown Model type "basic_clasifier"; did you mean "basic_classifier"?' in result.stderr
    assert "feedforward_classifier" in result.stderr


def test_missing_required_key_is_named(tmp_path, text_data):
    config = text_config(text_data)
    del config["train_data_path"]
    result = check(write_config(tmp_path / "c.json", config))
    assert result.returncode == 2
    assert "train_data_path: missing required key" in result.stderr


def test_nested_lazy_component_is_validated_before_any_data_is_read(tmp_path, text_data):
    config = text_config(text_data)
    config["train_data_path"] = str(tmp_path / "does_not_exist.jsonl")
    config["model"]["encoder"] = {"type": "cnn", "num_filters": "many"}
    result = check(write_config(tmp_path / "c.json", config))
    assert result.returncode == 2
    assert 'model.encoder.num_filters: expected an integer, got "many"' in result.stderr
    assert "does_not_exist" not in result.stderr


def test_all_problems_are_reported_at_once_one_per_line(tmp_path, text_data):
    config = text_config(text_data)
    config["trainer"]["optimizer"]["lr"] = "fast"
    config["trainer"]["num_epohcs"] = 3
    config["data_loader"]["batch_size"] = 2.5
    config["model"]["encoder"]["type"] = "bow"
    result = check(write_config(tmp_path / "c.json", config))
    assert result.returncode == 2
    assert "4 problems in the config" in result.stderr
    for expected in ("trainer.optimizer.lr:", "trainer.num_epohcs:", "data_loader.batch_size: expected an integer",
                     'model.encoder.type: unknown Seq2VecEncoder type "bow"'):
        assert expected in result.stderr


def test_jsonnet_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "broken.jsonnet"
    path.write_text('{\n  model: {type: "basic_classifier"},\n  trainer: {num_epochs: 3,, },\n}\n')
    result = check(path)
    assert result.returncode == 2
    assert f"jsonnet syntax error at {path}:3:" in result.stderr
    assert "Traceback" not in result.stderr


def test_undefined_ext_var_names_the_location(tmp_path):
    path = tmp_path / "ext.jsonnet"
    path.write_text('{\n  train_data_path: std.extVar("NO_SUCH_VARIABLE_XYZ"),\n}\n')
    result = check(path)
    assert result.returncode == 2
    assert "undefined external variable: NO_SUCH_VARIABLE_XYZ" in result.stderr
    assert f"{path}:2" in result.stderr


def test_debug_flag_shows_the_traceback(tmp_path, text_data):
    config = text_config(text_data)
    config["trainer"]["num_epohcs"] = 3
    result = run_cli("--debug", "check", str(write_config(tmp_path / "c.json", config)))
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_bad_overrides_json_is_a_one_line_error(tmp_path, text_data):
    result = check(write_config(tmp_path / "c.json", text_config(text_data)), "-o", "{not json")
    assert result.returncode == 2
    assert "--overrides: not valid JSON" in result.stderr


def test_ext_vars_and_dotted_overrides_reach_the_config(tmp_path, text_data):
    path = tmp_path / "exp.jsonnet"
    config = text_config(text_data)
    config["train_data_path"] = "TRAIN"
    text = json.dumps(config).replace('"TRAIN"', 'std.extVar("train")')
    path.write_text(text)
    result = check(path, "--ext-var", f"train={text_data['train']}", "-o", '{"trainer.num_epochs": 1, "data_loader.batch_size": 4}')
    assert result.returncode == 0, result.stderr
    assert "effective batch  4 = 4 per worker x 1 worker(s) x 1 accumulation" in result.stdout


def test_null_override_removes_a_key_so_the_default_applies(tmp_path, text_data):
    config = text_config(text_data)
    result = check(write_config(tmp_path / "c.json", config), "-o", '{"validation_data_path": null}')
    assert result.returncode == 0, result.stderr
    assert "validation data" not in result.stdout
