"""Adding a ``distributed`` block changes the number of processes and nothing else: the same global
batch gives the same updates, loss and accuracy, however it is split among the workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import write_jsonl
from support.distributed import final_metrics, max_weight_difference, train_digits

#: the core promise, with workers started as by default: from the fork server (tests/support/cli.py)
pytestmark = pytest.mark.default_start_method


@pytest.fixture(scope="module")
def digits(prepared_data) -> Path:
    return prepared_data / "data" / "digits"


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


def batch_sizes_by_rank(record_dir: Path) -> dict[int, list[int]]:
    """What each rank trained on: the size of each of its batches, in order (from the probe model)."""
    sizes: dict[int, list[int]] = {}
    for path in sorted(record_dir.glob("train.rank*.txt")):
        rank = int(path.name.split(".")[1].removeprefix("rank"))
        sizes.setdefault(rank, []).extend(len(line.split()) for line in path.read_text().splitlines())
    return sizes


@pytest.mark.parametrize("weights,shares", [([3, 1], (6, 2)), ([1, 3], (2, 6))])
def test_device_weights_set_each_workers_share_of_every_global_batch(tmp_path, weights, shares):
    # 48 records in global batches of 8 (4 per worker x 2): each worker's slice follows device_weights
    write_jsonl(tmp_path / "train.jsonl", [{"id": i, "text": f"w{i % 7} w{i % 5}"} for i in range(48)])
    distributed = {"cuda_devices": [-1, -1]} | ({"device_weights": weights} if weights else {})
    config = {
        "dataset_reader": {"type": "id_text_json"},
        "train_data_path": str(tmp_path / "train.jsonl"),
        "model": {"type": "id_recorder", "record_dir": str(tmp_path / "seen")},
        "data_loader": {"batch_size": 4},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "sgd", "lr": 0.01}, "progress_bar": False},
        "distributed": distributed,
    }
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"),
                     "--include-package", "data_probe", timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert batch_sizes_by_rank(tmp_path / "seen") == {0: [shares[0]] * 6, 1: [shares[1]] * 6}
