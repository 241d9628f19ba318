"""The garbage collector is kept out of start-up imports (``distrain.compat.import_gc``), and only out of
them: training, in the parent or in workers forked from the fork server, collects garbage as usual,
and skips the imported objects, which were frozen."""

from __future__ import annotations

import gc
import json

import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from distrain.compat import import_gc


def test_imports_run_without_collections_and_what_they_made_is_frozen_afterwards():
    frozen_before = gc.get_freeze_count()
    try:
        with pytest.raises(ValueError):
            with import_gc.importing():
                assert not gc.isenabled()
                made = [[] for _ in range(1000)]
                raise ValueError("a bad config stops validation half-way")
        assert gc.isenabled()  # on again, even after an error
        assert gc.get_freeze_count() >= frozen_before + len(made)
    finally:
        gc.unfreeze()  # this test process goes on collecting everything


@pytest.mark.parametrize("workers", [1, 2])
def test_training_collects_garbage_and_skips_the_frozen_imports(tmp_path, text_data, workers):
    """One process trains in the parent after its paused imports; two are forked from the fork server,
    whose preload paused the collector too: each must have it running again when training starts."""
    config = text_config(text_data, num_epochs=1, callbacks=[{"type": "test_gc_probe", "folder": str(tmp_path / "gc")}])
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"),
                     "--include-package", "gc_probe", env={"DISTRAIN_START_METHOD": "forkserver"})
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads((tmp_path / "gc" / f"rank{rank}.json").read_text()) for rank in range(workers)]
    print(f"{workers} worker(s): {records}")
    assert all(record["enabled"] for record in records), records
    assert all(record["frozen"] > 100_000 for record in records), records  # torch and the components
