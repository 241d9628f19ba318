"""Bad records and non-finite losses: named precisely, or skipped and counted when asked to."""

from __future__ import annotations

import json

import pytest
import torch
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from safetensors.torch import load_file


def data_with_broken_lines(tmp_path, broken_lines: tuple[int, ...]) -> dict:
    lines = [json.dumps(record) for record in sentiment_records(40, seed=3)]
    for number in broken_lines:
        lines[number - 1] = '{"text": "good movie", "label": '
    train = tmp_path / "train.jsonl"
    train.write_text("\n".join(lines) + "\n")
    return {"train": train, "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(8, seed=4))}


@pytest.mark.parametrize("workers", [1, 2])
def test_broken_json_on_line_5_gives_one_line_naming_file_and_line_5(tmp_path, workers):
    data = data_with_broken_lines(tmp_path, (5,))
    config = text_config(data)
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: {data['train']}:5: ")


def test_skip_invalid_trains_on_the_rest_and_reports_how_many_were_skipped(tmp_path):
    data = data_with_broken_lines(tmp_path, (5, 9))
    # also: save_every_num_seconds 0 checkpoints after every step
    config = text_config(data, num_epochs=1, save_every_num_seconds=0, keep_checkpoints=10)
    config["dataset_reader"]["skip_invalid"] = True
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert f"{data['train']}: skipped 2 invalid record(s)" in result.stderr
    saved = sorted(p.name for p in (tmp_path / "run" / "checkpoints").glob("epoch_*"))
    assert saved == [f"epoch_0000_batch_{n:08d}" for n in range(1, 6)] + ["epoch_0001_batch_00000000"]


def nan_config(tmp_path, nan_at_step: int, **trainer) -> dict:
    data = {
        "train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(64, seed=1)),
        "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(16, seed=2)),
    }
    config = text_config(data, save_every_num_batches=2, **trainer)
    config["model"]["type"] = "test_nan_classifier"
    config["model"]["nan_at_step"] = nan_at_step
    return config


def test_nan_loss_stops_with_the_step_number_and_keeps_the_last_good_checkpoint(tmp_path):
    config = write_config(tmp_path / "config.json", nan_config(tmp_path, nan_at_step=5))
    run = tmp_path / "run"
    result = run_cli("train", str(config), "-s", str(run), "--include-package", "recovery_plugins")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    latest = run / "checkpoints" / "epoch_0000_batch_00000004"
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: loss is not finite at step 5 (epoch 1, batch 5); the last good checkpoint is {latest}. "
        "Set trainer.skip_nonfinite_steps to skip such steps instead"
    )
    assert sorted(p.name for p in (run / "checkpoints").glob("epoch_*"))[-1] == latest.name
    assert all(torch.isfinite(tensor).all() for tensor in load_file(str(latest / "model.safetensors")).values())


def test_skip_nonfinite_steps_is_agreed_by_all_workers_when_one_sees_nan(tmp_path):
    config = nan_config(tmp_path, nan_at_step=3, skip_nonfinite_steps=True, num_epochs=1)
    config["model"]["nan_rank"] = 1
    config["distributed"] = {"cuda_devices": [-1, -1]}
    run = tmp_path / "run"
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(run),
                     "--include-package", "recovery_plugins")
    assert result.returncode == 0, result.stderr
    assert "skipped step 3 (epoch 1, batch 3)" in (run / "out_worker0.log").read_text()
    final = run / "checkpoints" / "epoch_0001_batch_00000000" / "model.safetensors"
    assert all(torch.isfinite(tensor).all() for tensor in load_file(str(final)).values())
