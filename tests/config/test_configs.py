"""Every shipped config (found by globbing ``configs/``, so new ones join by themselves) is validated,
its data read and its worker assembled by ``distrain check``, from a folder holding the data that
``scripts/prepare_data.py`` writes (packaged data is found through ``package://`` paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_cli
from support.paths import ROOT

#: ``NAME_search.jsonnet`` is a search space for ``distrain tune`` over ``NAME.jsonnet``
SEARCH_SPACES = sorted((ROOT / "configs").glob("*_search.jsonnet"))
CONFIGS = sorted(set((ROOT / "configs").glob("*.jsonnet")) - set(SEARCH_SPACES))


def test_the_shipped_configs_are_found():
    assert len(CONFIGS) >= 5


@pytest.mark.parametrize("config", CONFIGS, ids=[path.stem for path in CONFIGS])
def test_shipped_config_is_validated_and_built_by_check(config: Path, prepared_data: Path):
    result = run_cli("check", str(config), cwd=prepared_data, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith(f"config OK: {config}")
    for line in ("model ", "trainer ", "effective batch ", "steps per epoch "):
        assert line in result.stdout, line
    for line in SPLIT_LINES.get(config.stem, []):  # how a model-parallel config splits the model
        assert line in result.stdout, line


SPLIT_LINES = {
    "digits_mlp_pipeline": [
        "device mesh      pp 2 = 2 process(es)",
        "pipeline stage 0: feedforward.layers.0, feedforward.layers.1, feedforward.layers.2 (24,832 parameters)",
        "pipeline stage 1: feedforward.layers.3, output (1,290 parameters)",
        "rank 0 holds     parameters 97.0 KiB (99,328 B)",  # stage 0's parameters only (of 26,122)
    ],
    "shakespeare_mlm_tp": [
        "device mesh      tp 2 = 2 process(es)",
        "tensor parallel  12 linear layer(s) split over 2 ranks",
        "rank 0 holds     parameters 15.9 MiB (16,680,168 B)",  # 197,504 parameters (half of each split layer) fewer than whole
    ],
}


@pytest.mark.parametrize("space", SEARCH_SPACES, ids=[path.stem for path in SEARCH_SPACES])
def test_shipped_search_space_gives_valid_configs_at_every_corner(space: Path):
    from distrain.config.loading import evaluate_jsonnet
    from distrain.tuning.space import parse_search_space
    from distrain.tuning.validation import validate_space

    base = space.with_name(space.name.replace("_search.jsonnet", ".jsonnet"))
    assert base.is_file(), f"{space.name} has no base config {base.name}"
    assert validate_space(base, parse_search_space(evaluate_jsonnet(space))) >= 2
