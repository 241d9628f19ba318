"""Adding a ``distributed`` block changes the number of processes and nothing else: the same global
batch gives the same updates, loss and accuracy, however it is split among the workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from distributed_support import final_metrics, max_weight_difference


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("digits-data")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare_data.py"), "--only", "digits", "--out", str(out)],
                   check=True, capture_output=True)
    return out / "digits"


def train_digits(digits: Path, out: Path, batch_size: int, distributed: dict | None) -> Path:
    overrides = {
        "train_data_path": str(digits / "train.jsonl"),
        "validation_data_path": str(digits / "validation.jsonl"),
        "data_loader.batch_size": batch_size,
        "trainer.num_epochs": 2,
        "trainer.progress_bar": False,
    }
    if distributed is not None:
        overrides["distributed"] = distributed
    result = run_cli("train", str(ROOT / "configs" / "digits_mlp.jsonnet"), "-s", str(out), "-o", json.dumps(overrides),
                     timeout=180)
    assert result.returncode == 0, result.stderr
    return out


def test_two_workers_and_uneven_device_weights_match_one_worker(digits, tmp_path):
    one = train_digits(digits, tmp_path / "one", 16, None)
    two = train_digits(digits, tmp_path / "two", 8, {"cuda_devices": [-1, -1]})
    weighted = train_digits(digits, tmp_path / "weighted", 8, {"cuda_devices": [-1, -1], "device_weights": [3, 1]})

    for other in (two, weighted):
        assert max_weight_difference(one, other) <= 1e-5
        expected, got = final_metrics(one), final_metrics(other)
        for key in ("training_loss", "training_accuracy", "validation_loss", "validation_accuracy"):
            assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    assert "effective batch size 16 = 8 per worker x 2 worker(s) x 1 accumulation step(s)" in (
        (two / "out_worker0.log").read_text()
    )
