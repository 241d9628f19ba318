"""Every shipped config (found by globbing ``configs/``, so new ones join by themselves) is validated,
its data read and its worker assembled by ``distrain check``, from a folder holding the data that
``scripts/prepare_data.py`` writes (packaged data is found through ``package://`` paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT, run_cli

CONFIGS = sorted((ROOT / "configs").glob("*.jsonnet"))


def test_the_shipped_configs_are_found():
    assert len(CONFIGS) >= 5


@pytest.mark.parametrize("config", CONFIGS, ids=[path.stem for path in CONFIGS])
def test_shipped_config_is_validated_and_built_by_check(config: Path, prepared_data: Path):
    result = run_cli("check", str(config), cwd=prepared_data, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith(f"config OK: {config}")
    for line in ("model ", "trainer ", "effective batch ", "steps per epoch "):
        assert line in result.stdout, line
