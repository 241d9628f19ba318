"""Uneven data, an empty worker, an accumulation remainder and early stopping never hang a run,
and the uneven cases still make the single-process updates."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.distributed import MARKER, assert_nothing_left, final_metrics, max_weight_difference

#: no hang, with workers started as by default: from the fork server (tests/support/cli.py)
pytestmark = pytest.mark.default_start_method

TWO_CPU_WORKERS = {"cuda_devices": [-1, -1]}
NO_HANG_SECONDS = 120


def tiny_data(tmp_path: Path, train: int, validation: int) -> dict[str, Path]:
    return {
        "train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(train, seed=3)),
        "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(validation, seed=4)),
    }


def train(config: dict, out: Path) -> Path:
    """Train to the end within NO_HANG_SECONDS (collectives time out sooner), leaving no process behind."""
    if "distributed" in config:
        config = config | {"distributed": config["distributed"] | {"timeout": NO_HANG_SECONDS / 2}}
    marker = uuid.uuid4().hex
    result = run_cli("train", str(write_config(out.with_suffix(".json"), config)), "-s", str(out),
                     timeout=NO_HANG_SECONDS, env={MARKER: marker})
    assert result.returncode == 0, result.stderr
    assert_nothing_left(marker)
    return out


def test_empty_worker_and_accumulation_remainder_finish_with_single_process_updates(tmp_path):
    # 9 samples, global batch 8: the last global batch has 1 sample, so worker 1 gets nothing;
    # 2 batches per epoch with 3 accumulation steps leave a remainder step of 2 micro-batches;
    # 3 validation samples split 2/1.
    data = tiny_data(tmp_path, train=9, validation=3)
    trainer = {"num_gradient_accumulation_steps": 3, "num_epochs": 2}
    single = text_config(data, **trainer) | {"data_loader": {"batch_size": 8}}
    two = text_config(data, **trainer) | {"data_loader": {"batch_size": 4}, "distributed": TWO_CPU_WORKERS}

    one_worker = train(single, tmp_path / "one")
    two_workers = train(two, tmp_path / "two")

    assert max_weight_difference(one_worker, two_workers) <= 1e-5
    expected, got = final_metrics(one_worker), final_metrics(two_workers)
    for key in ("training_loss", "training_accuracy", "validation_loss", "validation_accuracy"):
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key


def test_early_stopping_on_reduced_metrics_with_uneven_shares_and_an_empty_validation_worker(tmp_path):
    # 11 samples in global batches of 6 split 1:3 between the workers, accumulation 1; a single
    # validation sample (worker 1 has none, so its own metrics would say nothing). With SGD at lr 0.5
    # the validation loss falls for 4 epochs and rises in the 5th, so patience 1 stops the run after
    # epoch index 4 of 8: on every worker at once, exactly as one process on the same global batches.
    data = tiny_data(tmp_path, train=11, validation=1)
    trainer = {"num_epochs": 8, "patience": 1, "optimizer": {"type": "sgd", "lr": 0.5}}
    single = text_config(data, **trainer) | {"data_loader": {"batch_size": 6}}
    config = text_config(data, **trainer) | {
        "data_loader": {"batch_size": 3}, "distributed": {"cuda_devices": [-1, -1], "device_weights": [1, 3]}}

    one = train(single, tmp_path / "one")
    out = train(config, tmp_path / "stopped")

    expected = final_metrics(one)
    assert (expected["epoch"], expected["best_epoch"]) == (4, 3)  # the reference stops early, not at the end
    got = final_metrics(out)
    assert (got["epoch"], got["best_epoch"]) == (4, 3)
    assert not (out / "metrics_epoch_5.json").exists()
    for epoch in range(5):  # what every epoch's decision was based on: the reduced (global) metrics
        reference = json.loads((one / f"metrics_epoch_{epoch}.json").read_text())
        metrics = json.loads((out / f"metrics_epoch_{epoch}.json").read_text())
        for key in ("training_loss", "training_accuracy", "validation_loss", "validation_accuracy"):
            assert metrics[key] == pytest.approx(reference[key], abs=1e-6), (epoch, key)
    for rank in (0, 1):
        assert "stopping early" in (out / f"out_worker{rank}.log").read_text()
