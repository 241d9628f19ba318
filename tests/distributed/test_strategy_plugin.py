"""A strategy from a plugin applies itself: ``test_replicated`` (tests/plugins/replicated_strategy.py) wraps
the model its own way and averages gradients after backward itself, with no edit under ``src/``, and two
workers train exactly what one does with the same global batch."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from support.distributed import final_metrics, max_weight_difference, train_digits


@pytest.fixture(scope="module")
def digits(prepared_data) -> Path:
    return prepared_data / "data" / "digits"


def train(digits: Path, out: Path, batch_size: int, distributed: dict | None) -> Path:
    accumulated = {"trainer.num_gradient_accumulation_steps": 2, "trainer.grad_norm": 0.5}
    return train_digits(digits, out, batch_size, distributed, accumulated, ("--include-package", "replicated_strategy"))


def records(folder: Path, rank: int) -> list[dict]:
    return [json.loads(line) for line in (folder / f"rank{rank}.jsonl").read_text().splitlines()]


def test_a_plugin_strategy_wraps_the_model_its_own_way_and_two_workers_train_as_one(digits, tmp_path):
    one = train(digits, tmp_path / "one", 8, None)
    strategy = {"type": "test_replicated", "record_dir": str(tmp_path / "averaged")}
    two = train(digits, tmp_path / "two", 4, {"cuda_devices": [-1, -1], "strategy": strategy})

    assert max_weight_difference(one, two) <= 1e-5
    expected, got = final_metrics(one), final_metrics(two)
    for key in ("training_loss", "training_accuracy", "validation_loss", "validation_accuracy"):
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    log = (two / "out_worker0.log").read_text()
    assert "effective batch size 16 = 4 per worker x 2 worker(s) x 2 accumulation step(s)" in log

    # the plugin's own wrapping ran: its wrapper's forwards, two micro-batches per averaging, and gradients that
    # still differed between the ranks when backward ended (DistributedDataParallel would have averaged them)
    first, second = records(tmp_path / "averaged", 0), records(tmp_path / "averaged", 1)
    batches = math.ceil(sum(1 for _ in open(digits / "train.jsonl")) / 8)  # global batches of 8 per epoch
    steps = 2 * math.ceil(batches / 2)  # two epochs of optimizer steps over two batches each
    assert len(first) == len(second) == steps
    assert [record["forwards"] for record in first] == [2 * (step + 1) for step in range(steps)]
    assert all(a["norm_before"] != pytest.approx(b["norm_before"], rel=1e-4) for a, b in zip(first, second))
