"""``"device_weights": "auto"``: shares of the global batch follow measured speeds, the updates stay
those of one process. The pure decisions (:mod:`distrain.distributed.balance`) are tested directly;
the whole through the CLI on 2 gloo workers, one of which turns 3x slower mid-run (in simulated seconds the
balancer's clock reads, so a busy machine changes nothing the tests see)."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.distributed import cli_environment, max_weight_difference, start
from distrain.distributed.balance import next_shares, proportional_shares
from test_sync_modes import PLUGINS, base_config

# ------------------------------------------------------------------------------ pure decisions


@pytest.mark.parametrize("speeds,total", [([1, 1], 16), ([3, 1], 16), ([2, 1, 1], 17), ([1.7, 0.3, 5.0], 64)])
def test_proportional_shares_are_integers_summing_to_the_global_batch(speeds, total):
    shares = proportional_shares(speeds, total)
    assert sum(shares) == total and all(isinstance(share, int) for share in shares)
    for share, speed in zip(shares, speeds):
        assert abs(share - total * speed / sum(speeds)) < 1


def test_proportional_shares_keep_every_worker_measurable():
    assert proportional_shares([1000.0, 1.0], 16) == [15, 1]
    with pytest.raises(ValueError):
        proportional_shares([1.0, 0.0], 16)


def test_next_shares_ignore_changes_within_the_tolerance():
    # a 1-in-16 wobble of the measured speeds does not move the shares (hysteresis)
    assert next_shares([8, 8], [1.0, 1.06], max_change=0.5, tolerance=0.1) == [8, 8]
    assert next_shares([8, 8], [1.0, 3.0], max_change=0.5, tolerance=0.1) == [12, 4]


def test_next_shares_move_at_most_max_change_of_the_batch_at_a_time():
    first = next_shares([8, 8], [1.0, 100.0], max_change=0.25, tolerance=0.0)
    assert first == [12, 4]  # the target is [15, 1]; a quarter of 16 is the most a share may move
    assert next_shares(first, [1.0, 100.0], max_change=0.25, tolerance=0.0) == [15, 1]
    shares = next_shares([10, 10, 12], [1.0, 1.0, 0.01], max_change=0.1, tolerance=0.0)
    assert sum(shares) == 32 and abs(shares[2] - 12) <= 0.1 * 32 + 1


# ---------------------------------------------------------------------------- whole runs (CLI)
SLOW_AFTER = 12  # rank 1's 13th forward on is 3x slower
AUTO = {"type": "auto", "calibration_steps": 3, "rebalance_every": 4, "max_change": 0.25, "tolerance": 0.1}


def slow_config(folder: Path, distributed: dict | None, batch_size: int) -> Path:
    config = base_config(folder)
    config["model"] = config["model"] | {"type": "test_slow_classifier", "seconds_per_sample": 0.001,
                                         "slowdown": 3.0, "slow_after": SLOW_AFTER,
                                         "simulated_time": True}
    config["data_loader"] = {"batch_size": batch_size}
    if distributed is not None:
        config["distributed"] = distributed
    return write_config(folder / "config.json", config)


@pytest.fixture(scope="module")
def balanced(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("auto-balance")
    runs = {}
    for name, distributed, batch in (("one", None, 16),
                                     ("auto", {"cuda_devices": [-1, -1], "device_weights": AUTO}, 8)):
        (folder / name).mkdir()
        config = slow_config(folder / name, distributed, batch)
        result = run_cli("train", str(config), "-s", str(folder / name / "run"), *PLUGINS, timeout=180)
        assert result.returncode == 0, result.stderr[-3000:]
        runs[name] = folder / name / "run"
    return runs


def balance_lines(log: str) -> list[tuple[int, list[int]]]:
    return [(int(step), json.loads(shares))
            for step, shares in re.findall(r"balance at step (\d+): .* -> shares (\[[\d, ]+\])", log)]


def test_auto_shares_keep_the_weights_of_one_process(balanced):
    assert max_weight_difference(balanced["one"], balanced["auto"]) <= 1e-5


def test_auto_shares_follow_a_slowdown_within_two_windows(balanced):
    lines = balance_lines((balanced["auto"] / "out_worker0.log").read_text())
    # in simulated seconds every decision is known: equal speeds halve the batch at the end of calibration (step 3)
    # and nothing moves it; the window of steps 12-15 holds one normal forward of rank 1 and three 3x slower ones
    # (2.5x on average), and from there on 3x would move a share by 1 of 16, within the tolerance of 0.1
    mixed = next_shares([8, 8], [0.001, 0.001 * (1 + 3 + 3 + 3) / 4], AUTO["max_change"], AUTO["tolerance"])
    assert mixed[0] > mixed[1] and next_shares(mixed, [0.001, 0.003], AUTO["max_change"], AUTO["tolerance"]) == mixed
    assert lines == [(3, [8, 8]), (15, mixed)]
    metrics = json.loads((balanced["auto"] / "metrics.json").read_text())
    assert metrics["worker_shares"][0] > metrics["worker_shares"][1]
    assert metrics["worker_relative_throughput"] == [1.0, round(1 / 3, 4)]  # simulated seconds: exactly 3x
    assert len(metrics["worker_examples_per_s"]) == 2


def test_auto_shares_resume_from_the_checkpoint_after_kill_9(balanced, tmp_path):
    config = slow_config(tmp_path, {"cuda_devices": [-1, -1], "device_weights": AUTO}, 8)
    run = tmp_path / "run"
    process = start(["-m", "distrain", "train", str(config), "-s", str(run), *PLUGINS],
                    cli_environment() | {"DISTRAIN_TEST_KILL_AT_STEP": "21"}, start_new_session=True)
    _, stderr = process.communicate(timeout=180)
    assert process.returncode == -signal.SIGKILL, stderr[-3000:]
    before_kill = balance_lines((run / "out_worker0.log").read_text())
    saved = [shares for step, shares in before_kill if step <= 20][-1]  # the checkpoint after step 20
    recovered = run_cli("train", str(config), "-s", str(run), "--recover", *PLUGINS, timeout=180)
    assert recovered.returncode == 0, recovered.stderr[-3000:]
    assert f"balance resumed with the checkpoint's shares {saved}" in (run / "out_worker0.log").read_text()
    assert max_weight_difference(balanced["auto"], run) <= 1e-5
    assert max_weight_difference(balanced["one"], run) <= 1e-5


def test_auto_needs_two_workers(tmp_path):
    config = slow_config(tmp_path, {"cuda_devices": [-1], "device_weights": "auto"}, 8)
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"), *PLUGINS, timeout=120)
    assert result.returncode == 2, result.stderr[-3000:]
    assert "distributed.device_weights: auto balances shares between data-parallel workers; this job has 1" in (
        result.stderr)
