"""The search space of `distrain tune`: parsing, corner points and validation through the config machinery."""

from __future__ import annotations

import json

import pytest
from support.configs import text_config, write_config

from distrain.tuning.space import (
    MAX_CORNER_POINTS, Param, SearchSpaceError, corner_points, grid_space, parse_search_space, split_point,
)
from distrain.tuning.validation import validate_space


@pytest.mark.parametrize("spec, message", [
    ({"model.embedding_dim": {"type": "int", "low": 8.5, "high": 16}}, '"low" must be an integer'),
    ({"model.embedding_dim": {"type": "int", "low": 32, "high": 16}}, "low 32 is above high 16"),
    ({"trainer.optimizer.lr": {"type": "float", "low": 0, "high": 0.1, "log": True}}, "log range needs low > 0"),
    ({"trainer.optimizer.lr": {"type": "uniform", "low": 0, "high": 1}}, '"type" must be one of'),
    ({"trainer.optimizer.lr": {"type": "float", "low": 0, "high": 1, "lg": True}}, 'unknown field "lg"'),
    ({"model.encoder.type": {"type": "categorical", "choices": []}}, '"choices" must be a non-empty list'),
    ({"model.encoder": {"type": "categorical", "choices": [{"type": "boe"}]}}, "is not a number, string"),
    ({"model..dim": {"type": "int", "low": 1, "high": 2}}, "not a dotted config path"),
    ({"extVar:": {"type": "int", "low": 1, "high": 2}}, "needs a variable name"),
])
def test_malformed_distribution_names_its_search_key(spec, message):
    key = next(iter(spec))
    with pytest.raises(SearchSpaceError) as error:
        parse_search_space(spec)
    assert f'search key "{key}"' in str(error.value)
    assert message in str(error.value)


def test_int_step_upper_bound_is_the_last_value_on_the_grid():
    (param,) = parse_search_space({"model.embedding_dim": {"type": "int", "low": 16, "high": 100, "step": 16}})
    assert param.extremes() == [16, 96]
    assert param.grid() == [16, 32, 48, 64, 80, 96]


def test_corner_points_combine_every_bound_and_choice():
    params = parse_search_space({
        "trainer.optimizer.lr": {"type": "float", "low": 0.001, "high": 0.1, "log": True},
        "model.encoder.type": {"type": "categorical", "choices": ["boe", "cnn", "lstm"]},
    })
    points = corner_points(params)
    assert len(points) == 6
    assert {(p["trainer.optimizer.lr"], p["model.encoder.type"]) for p in points} == {
        (lr, kind) for lr in (0.001, 0.1) for kind in ("boe", "cnn", "lstm")
    }


def test_too_many_corners_vary_one_key_at_a_time():
    params = [Param(f"k{i}", "categorical", choices=tuple(range(4))) for i in range(5)]  # 4**5 > limit
    assert 4 ** 5 > MAX_CORNER_POINTS
    points = corner_points(params)
    assert len(points) == 1 + 5 * 3
    for param in params:  # every value of every key is visited
        assert {point[param.key] for point in points} == {0, 1, 2, 3}


def test_ext_vars_are_strings_and_dotted_keys_overrides():
    overrides, ext_vars = split_point({"extVar:lr": 0.01, "extVar:encoder": "cnn", "model.dropout": 0.5})
    assert overrides == {"model.dropout": 0.5}
    assert ext_vars == {"lr": "0.01", "encoder": "cnn"}


def test_grid_needs_a_step_for_float_ranges():
    params = parse_search_space({"trainer.optimizer.lr": {"type": "float", "low": 0.1, "high": 0.3}})
    with pytest.raises(SearchSpaceError, match='search key "trainer.optimizer.lr"'):
        grid_space(params)


def test_negative_batch_size_bound_names_the_search_key_and_value(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data))
    params = parse_search_space({
        "trainer.optimizer.lr": {"type": "float", "low": 0.001, "high": 0.1, "log": True},
        "data_loader.batch_size": {"type": "int", "low": -4, "high": 16},
    })
    with pytest.raises(SearchSpaceError) as error:
        validate_space(config, params)
    message = str(error.value)
    assert 'search key "data_loader.batch_size" = -4' in message
    assert "trainer.optimizer.lr" not in message.partition(" gives")[0]


def test_unknown_key_names_the_search_key(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data))
    params = parse_search_space({"model.embeding_dim": {"type": "int", "low": 8, "high": 16}})
    with pytest.raises(SearchSpaceError, match='search key "model.embeding_dim" = 8 .*unknown key'):
        validate_space(config, params)


def test_an_invalid_choice_is_found_even_when_others_are_valid(tmp_path, text_data):
    config = write_config(tmp_path / "exp.json", text_config(text_data))
    params = parse_search_space({"model.encoder.type": {"type": "categorical", "choices": ["boe", "bow"]}})
    with pytest.raises(SearchSpaceError, match='search key "model.encoder.type" = "bow"'):
        validate_space(config, params)


def test_ext_var_values_are_validated_through_the_jsonnet(tmp_path, text_data):
    base = text_config(text_data)
    jsonnet = tmp_path / "exp.jsonnet"
    body = json.dumps(base, indent=2)
    body = body.replace('"batch_size": 8', '"batch_size": std.parseJson(std.extVar("bs"))')
    jsonnet.write_text(body)
    good = parse_search_space({"extVar:bs": {"type": "int", "low": 4, "high": 16}})
    assert validate_space(jsonnet, good) == 2
    bad = parse_search_space({"extVar:bs": {"type": "int", "low": 0, "high": 16}})
    with pytest.raises(SearchSpaceError, match='search key "extVar:bs" = 0 .*data_loader.batch_size'):
        validate_space(jsonnet, bad)
