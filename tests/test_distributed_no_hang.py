"""Uneven data, an empty worker, an accumulation remainder and early stopping never hang a run,
and the uneven cases still make the single-process updates."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, sentiment_records, text_config, write_config, write_jsonl
from distributed_support import final_metrics, max_weight_difference

TWO_CPU_WORKERS = {"cuda_devices": [-1, -1]}
NO_HANG_SECONDS = 120


def tiny_data(tmp_path: Path, train: int, validation: int) -> dict[str, Path]:
    return {
        "train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(train, seed=3)),
        "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(validation, seed=4)),
    }


def train(config: dict, out: Path) -> Path:
    result = run_cli("train", str(write_config(out.with_suffix(".json"), config)), "-s", str(out), timeout=NO_HANG_SECONDS)
    assert result.returncode == 0, result.stderr
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


def test_early_stopping_with_uneven_shares_and_an_empty_validation_worker_stops_every_worker(tmp_path):
    # 11 samples in global batches of 6 split 1:3 between the workers, accumulation 1; a single
    # validation sample (worker 1 has none). With lr 0 the validation loss never improves, so
    # patience 1 stops the run after its second epoch on every worker at once.
    data = tiny_data(tmp_path, train=11, validation=1)
    config = text_config(data, num_epochs=6, patience=1, optimizer={"type": "adam", "lr": 0.0})
    config |= {"data_loader": {"batch_size": 3}, "distributed": {"cuda_devices": [-1, -1], "device_weights": [1, 3]}}

    out = train(config, tmp_path / "stopped")

    assert final_metrics(out)["epoch"] == 1
    assert not (out / "metrics_epoch_2.json").exists()
    assert "stopping early" in (out / "out_worker1.log").read_text()
