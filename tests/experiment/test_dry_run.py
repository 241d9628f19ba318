"""``distrain check CONFIG --world-size N``: a dry run at any scale, on one process.

The shares and steps it prints are compared with what real 1-, 2- and 3-process runs of the same
config receive (a probe model records every rank's batch sizes); scale problems are key-path errors.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import sentiment_records, write_jsonl
from support.paths import ROOT

PLUGIN = ("--include-package", "observe_probe")


def parse_dry_run(stdout: str) -> tuple[int, dict[int, tuple[int, int, int]]]:
    """(steps per epoch, {rank: (per batch, last batch, per epoch)}) from the dry run's lines."""
    steps = int(re.search(r"steps per epoch\s+(\d+)", stdout).group(1))
    shares = {}
    for first, last, per_batch, last_batch, per_epoch in re.findall(
        r"ranks? (\d+)(?:-(\d+))?: (\d+) \((\d+)\), (\d+) per epoch", stdout
    ):
        for rank in range(int(first), int(last or first) + 1):
            shares[rank] = (int(per_batch), int(last_batch), int(per_epoch))
    return steps, shares


def recorded(record_dir: Path, workers: int, epochs: int) -> tuple[int, dict[int, int]]:
    """(steps per epoch, {rank: samples per epoch}) of a real run's probe files."""
    per_rank = {}
    steps = set()
    for rank in range(workers):
        sizes = [int(line) for line in (record_dir / f"train.rank{rank}.txt").read_text().split()]
        assert len(sizes) % epochs == 0
        steps.add(len(sizes) // epochs)
        assert sum(sizes) % epochs == 0
        per_rank[rank] = sum(sizes) // epochs
    assert len(steps) == 1, f"ranks took different step counts: {steps}"
    return steps.pop(), per_rank


@pytest.fixture(scope="module")
def probe_config(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("dry")
    train = write_jsonl(folder / "train.jsonl", sentiment_records(37, seed=3))
    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(train),
        "model": {"type": "test_share_recorder", "record_dir": "RECORD_DIR"},
        "data_loader": {"batch_size": 4},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "sgd", "lr": 0.01}, "progress_bar": False},
    }
    return write_config(folder / "probe.json", config), folder


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_dry_run_shares_and_steps_equal_those_of_real_runs(probe_config, tmp_path, workers):
    import json

    config, _ = probe_config
    record_dir = tmp_path / "records"
    dry = run_cli("check", str(config), "--world-size", str(workers), *PLUGIN,
                  "-o", json.dumps({"model.record_dir": str(tmp_path / "unused")}),
                  env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert dry.returncode == 0, dry.stderr
    dry_steps, dry_shares = parse_dry_run(dry.stdout)
    assert sorted(dry_shares) == list(range(workers))

    overrides = {"model.record_dir": str(record_dir)}
    if workers > 1:
        overrides["distributed"] = {"cuda_devices": [-1] * workers}
    real = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGIN, "-o", json.dumps(overrides),
                   env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert real.returncode == 0, real.stderr
    real_steps, real_shares = recorded(record_dir, workers, epochs=2)
    assert dry_steps == real_steps
    assert {rank: share[2] for rank, share in dry_shares.items()} == real_shares
    assert sum(real_shares.values()) == 37


def test_dry_run_at_1024_ranks_summarises_the_shares_and_counts_state_bytes(tmp_path):
    train = write_jsonl(tmp_path / "train.jsonl",
                        [{"features": [float(i % 7)] * 8, "label": str(i % 3)} for i in range(1500)])
    config = write_config(tmp_path / "ff.json", {
        "dataset_reader": {"type": "feature_classification_json"},
        "train_data_path": str(train),
        "model": {"type": "feedforward_classifier", "input_dim": 8, "feedforward": {"hidden_dims": [16]}},
        "data_loader": {"batch_size": 2},
        "trainer": {"optimizer": {"type": "adam"}},
    })
    result = run_cli("check", str(config), "--world-size", "1024", "--nodes", "128",
                     env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    steps, shares = parse_dry_run(result.stdout)
    # one global batch of 2048 > 1500 records: ranks 0-475 get 2 samples, the others 1
    assert steps == 1 and len(shares) == 1024
    assert shares[0] == (2, 2, 2) and shares[475] == (2, 2, 2) and shares[476] == (1, 1, 1)
    assert "dp_replicate 1024 = 1024 process(es)" in result.stdout
    assert "effective batch  2048 = 2 per worker x 1024 worker(s)" in result.stdout
    # 8*16+16 + 16*3+3 = 195 float32 parameters; Adam keeps two moments each and a step count per tensor
    assert re.search(r"parameters\s+780 B", result.stdout)
    assert re.search(r"gradients\s+780 B", result.stdout)
    assert re.search(r"optimizer\s+1\.5 KiB \(1,576 B\)", result.stdout)  # 2 x 780 + 4 step counts x 4 bytes


def scale_config(tmp_path: Path, **extra) -> Path:
    train = write_jsonl(tmp_path / "train.jsonl", sentiment_records(5, seed=1))
    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(train),
        "model": {"type": "basic_classifier", "embedding_dim": 4, "encoder": {"type": "boe"}},
        "trainer": {"progress_bar": False},
        **extra,
    }
    return write_config(tmp_path / "config.json", config)


def check_fails(tmp_path: Path, config: Path, *arguments: str) -> str:
    result = run_cli("check", str(config), *arguments, *PLUGIN, env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stderr.strip()


def test_the_strategy_adds_its_own_notes_to_the_dry_run(tmp_path):
    """``ddp`` with ``gradient_as_bucket_view`` off says what it costs; on, it says nothing."""
    for bucket_view, said in ((False, True), (True, False)):
        strategy = {"type": "ddp", "gradient_as_bucket_view": bucket_view}
        config = scale_config(tmp_path, distributed={"cuda_devices": [-1], "strategy": strategy})
        result = run_cli("check", str(config), "--world-size", "2", env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
        assert result.returncode == 0, result.stderr
        assert ("gradient_as_bucket_view is off: DDP keeps another copy" in result.stdout) is said, result.stdout


def test_fewer_training_records_than_ranks_is_a_key_path_error(tmp_path):
    message = check_fails(tmp_path, scale_config(tmp_path), "--world-size", "8")
    assert message.startswith("error: train_data_path: 5 training record(s) for 8 data-parallel ranks")
    assert "ranks 5..7 would never see data" in message


def test_degrees_that_do_not_divide_the_world_are_a_key_path_error(tmp_path):
    config = scale_config(tmp_path, distributed={"cuda_devices": [-1], "strategy": {"type": "test_tensor_parallel", "tp": 4}})
    message = check_fails(tmp_path, config, "--world-size", "6")
    assert message.startswith("error: distributed: the parallel degrees multiply to 4")
    assert "not to the 6 processes" in message
    assert not (tmp_path / "cache").exists()  # refused before any data was read


def test_device_weights_of_the_wrong_length_are_a_key_path_error(tmp_path):
    config = scale_config(tmp_path, distributed={"cuda_devices": [-1], "device_weights": [1, 2]})
    message = check_fails(tmp_path, config, "--world-size", "3")
    assert message == "error: distributed.device_weights: needs one weight per data-parallel worker (3), got 2"
    assert not (tmp_path / "cache").exists()


def test_fewer_shards_than_readers_is_a_key_path_error(tmp_path):
    for number in range(2):
        write_jsonl(tmp_path / "shards" / f"part-{number}.jsonl", sentiment_records(6, seed=number))
    config = write_config(tmp_path / "config.json", {
        "dataset_reader": {"type": "sharded", "base_reader": {"type": "text_classification_json"}},
        "train_data_path": str(tmp_path / "shards" / "*.jsonl"),
        "model": {"type": "basic_classifier", "embedding_dim": 4, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 2, "lazy": True, "num_workers": 2},
    })
    message = check_fails(tmp_path, config, "--world-size", "4")
    assert message.startswith("error: train_data_path: ")
    assert "2 shard file(s) for 8 readers" in message
    assert not (tmp_path / "cache").exists()


def test_world_size_flags_are_checked(tmp_path):
    config = scale_config(tmp_path)
    assert "does not split evenly over --nodes 3" in check_fails(tmp_path, config, "--world-size", "4", "--nodes", "3")
    assert "--world-size must be at least 1" in check_fails(tmp_path, config, "--world-size", "0")

