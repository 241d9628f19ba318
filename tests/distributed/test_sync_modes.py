"""``distributed.sync``: local SGD and DiLoCo through the public CLI on real gloo workers.

At ``sync_every: 1`` local SGD (SGD with momentum) makes the synchronous updates, with even shares
and with ``device_weights``; DiLoCo with an outer SGD of lr 1 and no momentum is local SGD; a run
killed mid-window resumes bitwise; ``sync_count``/``sync_bytes`` in the metrics show how much less
local SGD moves. The expensive 2-worker runs are made once, in the module fixture.
"""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from support.cli import run_cli
from support.configs import write_config
from support.data import write_jsonl
from support.distributed import archived_weights, cli_environment, max_weight_difference, start

STEPS_PER_EPOCH = 16  # 256 records in global batches of 16: every batch splits 8/8 or 12/4 exactly
EPOCHS = 2
PLUGINS = ("--include-package", "recovery_plugins", "--include-package", "sync_probe")


def feature_records(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    records = []
    for _ in range(count):
        features = [rng.randint(0, 16) for _ in range(8)]
        label = int(features[0] + features[1] > 16) + int(features[2] > 8)
        records.append({"features": features, "label": str(label)})
    return records


def base_config(folder: Path) -> dict:
    return {
        "dataset_reader": {"type": "feature_classification_json"},
        "train_data_path": str(write_jsonl(folder / "train.jsonl", feature_records(256, seed=1))),
        "validation_data_path": str(write_jsonl(folder / "validation.jsonl", feature_records(64, seed=2))),
        "model": {"type": "feedforward_classifier", "input_dim": 8, "feature_scale": 1 / 16,
                  "feedforward": {"hidden_dims": [16], "activation": "relu"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"optimizer": {"type": "sgd", "lr": 0.1, "momentum": 0.9}, "num_epochs": EPOCHS,
                    "progress_bar": False, "save_every_num_batches": 2, "callbacks": [{"type": "test_kill_switch"}]},
    }


def distributed(sync: dict | None = None, weights: list | None = None) -> dict:
    block: dict = {"cuda_devices": [-1, -1]}
    if sync is not None:
        block["sync"] = sync
    if weights is not None:
        block["device_weights"] = weights
    return block


RUNS = {
    "every_step": distributed(),
    "local_sgd_1": distributed({"type": "local_sgd", "sync_every": 1}),
    "every_step_3_1": distributed(weights=[3, 1]),
    "local_sgd_1_3_1": distributed({"type": "local_sgd", "sync_every": 1}, [3, 1]),
    "local_sgd_8": distributed({"type": "local_sgd", "sync_every": 8}),
    "diloco_8": distributed({"type": "diloco", "sync_every": 8,
                             "outer_optimizer": {"type": "sgd", "lr": 1.0, "momentum": 0.0}}),
    "bf16": distributed() | {"gradient_compression": {"type": "bf16"}},
    "powersgd": distributed() | {"gradient_compression": {"type": "powersgd", "rank": 1, "start_iter": 2}},
}


def config_for(folder: Path, name: str) -> Path:
    return write_config(folder / f"{name}.json", base_config(folder) | {"distributed": RUNS[name]})


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Each configuration of ``RUNS`` trained once on 2 gloo workers."""
    folder = tmp_path_factory.mktemp("sync-modes")
    done = {}
    for name in RUNS:
        result = run_cli("train", str(config_for(folder, name)), "-s", str(folder / name), *PLUGINS, timeout=180)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        done[name] = folder / name
    return done


def epoch_metrics(run: Path) -> list[dict]:
    return [json.loads((run / f"metrics_epoch_{epoch}.json").read_text()) for epoch in range(EPOCHS)]


@pytest.mark.parametrize("synchronous,local", [("every_step", "local_sgd_1"), ("every_step_3_1", "local_sgd_1_3_1")])
def test_local_sgd_syncing_every_step_equals_every_step_with_sgd_momentum(runs, synchronous, local):
    assert max_weight_difference(runs[synchronous], runs[local]) <= 1e-6
    for expected, got in zip(epoch_metrics(runs[synchronous]), epoch_metrics(runs[local])):
        for key in ("training_loss", "training_accuracy", "validation_loss", "validation_accuracy"):
            assert got[key] == pytest.approx(expected[key], abs=1e-6), key


def test_local_sgd_differs_from_every_step_when_it_syncs_less_often(runs):
    # the equality above is not vacuous: averaging every 8 steps is another algorithm
    assert max_weight_difference(runs["every_step"], runs["local_sgd_8"]) > 1e-4


def test_diloco_with_plain_outer_sgd_of_lr_1_equals_local_sgd(runs):
    assert max_weight_difference(runs["local_sgd_8"], runs["diloco_8"]) <= 1e-6


def test_local_sgd_every_8_steps_syncs_at_most_every_8th_step_and_moves_8x_fewer_bytes(runs):
    steps = STEPS_PER_EPOCH * EPOCHS
    every = epoch_metrics(runs["every_step"])
    local = epoch_metrics(runs["local_sgd_8"])
    assert sum(m["sync_count"] for m in every) == steps
    assert 0 < sum(m["sync_count"] for m in local) <= -(-steps // 8)
    every_bytes, local_bytes = sum(m["sync_bytes"] for m in every), sum(m["sync_bytes"] for m in local)
    assert local_bytes > 0 and every_bytes >= 7.9 * local_bytes


def test_gradient_compression_trains_and_sends_fewer_bytes(runs):
    every = epoch_metrics(runs["every_step"])
    every_bytes = sum(m["sync_bytes"] for m in every)
    for name, most in (("bf16", 0.5), ("powersgd", 0.7)):
        compressed = epoch_metrics(runs[name])
        assert [m["sync_count"] for m in compressed] == [m["sync_count"] for m in every]
        assert 0 < sum(m["sync_bytes"] for m in compressed) <= most * every_bytes, name
        # rounded or low-rank gradients: another update, yet it learns about as well
        assert max_weight_difference(runs["every_step"], runs[name]) > 0, name
        assert compressed[-1]["training_loss"] < compressed[0]["training_loss"], name
        assert compressed[-1]["training_loss"] == pytest.approx(every[-1]["training_loss"], abs=0.02), name


def test_kill_9_mid_window_with_local_sgd_then_recover_is_bitwise_equal(runs, tmp_path):
    # killed after step 21: the last checkpoint (step 20) lies between the averages at steps 16 and 24,
    # so each worker's own parameters and optimizer state must come back
    config = config_for(tmp_path, "local_sgd_8")
    run = tmp_path / "killed"
    environment = cli_environment() | {"DISTRAIN_TEST_KILL_AT_STEP": "21"}
    process = start(["-m", "distrain", "train", str(config), "-s", str(run), *PLUGINS], environment,
                    start_new_session=True)
    _, stderr = process.communicate(timeout=180)
    assert process.returncode == -signal.SIGKILL, stderr[-3000:]
    assert (run / "checkpoints" / "epoch_0001_batch_00000004").is_dir()
    recovered = run_cli("train", str(config), "-s", str(run), "--recover", *PLUGINS, timeout=180)
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    reference, resumed = archived_weights(runs["local_sgd_8"]), archived_weights(run)
    for name in reference:
        assert torch.equal(reference[name], resumed[name]), name
    final = "checkpoints/epoch_0002_batch_00000000/model.safetensors"
    expected, actual = load_file(str(runs["local_sgd_8"] / final)), load_file(str(run / final))
    assert all(torch.equal(expected[name], actual[name]) for name in expected)
    for first, second in zip(epoch_metrics(runs["local_sgd_8"]), epoch_metrics(run)):
        first.pop("training_duration"), second.pop("training_duration")
        assert first == second


@pytest.mark.parametrize("block,messages", [
    ({"sync": {"type": "local_sgd", "sync_every": 0}, "gradient_compression": {"type": "powersgd", "start_iter": 1}},
     ["distributed.sync.sync_every", "distributed.gradient_compression.start_iter"]),
    ({"sync": {"type": "diloco"}, "strategy": {"type": "test_not_replicated"}, "gradient_compression": {"type": "bf16"}},
     ["distributed.sync: diloco averages whole parameters",
      "distributed.gradient_compression: compresses gradients, which sync diloco never sends"]),
])
def test_sync_modes_refuse_what_they_cannot_serve_all_problems_at_once(tmp_path, block, messages):
    config = write_config(tmp_path / "config.json", base_config(tmp_path) | {"distributed": distributed() | block})
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGINS, timeout=120)
    assert result.returncode == 2, result.stderr[-3000:]
    for message in messages:
        assert message in result.stderr
    assert not (tmp_path / "run" / "checkpoints").exists()
