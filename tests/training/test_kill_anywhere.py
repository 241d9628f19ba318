"""``kill -9`` of a whole 2-worker job at a seeded random moment, chosen from outside (often while a
checkpoint is being written), then ``--recover``: the result is bitwise that of an uninterrupted run.

The workers use dropout, so the result also depends on every worker's random state being restored.
"""

from __future__ import annotations

import json
import os
import random
import time
import uuid
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.distributed import (
    MARKER, archived_weights, assert_nothing_left, cli_environment, kill_job, start, tagged_processes,
)

SEEDS = (11, 12, 13, 15)  # 3 kills as a checkpoint write begins, 1 at a random time
FINAL = "checkpoints/epoch_0002_batch_00000000/model.safetensors"
RUN_SECONDS = 240
TOTAL_SECONDS = 900  # the whole test, every seed included


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("kill-anywhere")
    data = {
        "train": write_jsonl(folder / "train.jsonl", sentiment_records(120, seed=1)),
        "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(40, seed=2)),
    }
    # 8 global batches of 16 per epoch, 2 epochs, a checkpoint after every batch: 16 checkpoint writes
    settings = text_config(data, save_every_num_batches=1) | {"distributed": {"cuda_devices": [-1, -1]}}
    settings["model"] |= {"dropout": 0.3, "embedding_dim": 256}  # a bigger checkpoint takes longer to write
    return write_config(folder / "config.json", settings)


def watch(process, checkpoints: Path, stop_when) -> list[tuple[float, str]]:
    """Poll ``checkpoints`` as fast as is reasonable; every new entry (a ``.tmp-*`` folder being
    written, a checkpoint renamed into place, ...) is an event ``(seconds since start, name)``.
    Stops when the process ends or ``stop_when(events)`` says so."""
    started, seen, events = time.monotonic(), set(), []
    deadline = started + RUN_SECONDS
    while process.poll() is None:
        assert time.monotonic() < deadline, f"the run did not finish within {RUN_SECONDS} s"
        try:
            names = os.listdir(checkpoints)
        except FileNotFoundError:
            names = []
        for name in sorted(set(names) - seen):
            seen.add(name)
            events.append((time.monotonic() - started, name))
        if stop_when(events):
            break
        time.sleep(0.001)
    return events


@pytest.fixture(scope="module")
def reference(config, tmp_path_factory) -> tuple[Path, list[tuple[float, str]]]:
    """The uninterrupted run, and when each checkpoint entry appeared in it."""
    out = tmp_path_factory.mktemp("reference") / "run"
    environment = cli_environment()
    process = start(["-m", "distrain", "train", str(config), "-s", str(out)], environment, start_new_session=True)
    events = watch(process, out / "checkpoints", lambda events: False)
    _, stderr = process.communicate(timeout=RUN_SECONDS)
    assert process.returncode == 0, stderr
    assert_nothing_left(environment[MARKER])
    return out, events


def checkpoint_events(events: list[tuple[float, str]]) -> list[float]:
    return [moment for moment, name in events if name.startswith("epoch_")]


def test_kill_9_of_the_whole_job_at_seeded_moments_then_recover_is_bitwise_equal(config, reference, tmp_path):
    started = time.monotonic()
    reference_run, reference_events = reference
    written = checkpoint_events(reference_events)
    assert len(written) >= 10, reference_events
    interval = (written[-1] - written[0]) / (len(written) - 1)
    expected_final = load_file(str(reference_run / FINAL))
    expected_archive = archived_weights(reference_run)
    expected_metrics = metrics_without_duration(reference_run)
    inside_a_write = 0
    for seed in SEEDS:
        rng = random.Random(seed)
        run = tmp_path / f"seed{seed}"
        marker = uuid.uuid4().hex
        environment = cli_environment(marker)
        if rng.random() < 0.5:
            # the moment the k-th checkpoint write begins (its .tmp-* folder shows up); the run writes
            # through the slow_checkpoint_writes plugin (a 50 ms pause inside every write), so the kill
            # lands inside that write, not after a write that took a millisecond
            k = rng.randint(2, len(written) - 2)
            moment = f"as the {k}th checkpoint write began"
            stop_when = lambda events, k=k: sum(name.startswith(".tmp-epoch") for _, name in events) >= k  # noqa: E731
            delay = 0.0
        else:
            # a random time after the j-th checkpoint: anywhere in a step, the loop or a write
            j = rng.randint(1, len(written) - 2)
            delay = rng.uniform(0, interval)
            moment = f"{delay:.3f} s after checkpoint {j}"
            stop_when = lambda events, j=j: len([1 for _, name in events if name.startswith("epoch_")]) >= j  # noqa: E731
        process = start(["-m", "distrain", "train", str(config), "-s", str(run), "--include-package",
                         "slow_checkpoint_writes"], environment, start_new_session=True)
        events = watch(process, run / "checkpoints", stop_when)
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.001)
        assert process.poll() is None, f"seed {seed}: the run ended before the kill ({moment})"
        kill_job(process, marker)
        assert not tagged_processes(marker), f"seed {seed}: a process of the job survived kill -9"
        left_over = [p.name for p in (run / "checkpoints").iterdir() if p.name.startswith(".tmp-epoch")]
        inside_a_write += bool(left_over)
        context = f"seed {seed}: killed {moment}, after {events[-1][1] if events else 'nothing'}; left {left_over}"

        recovered = run_cli("train", str(config), "-s", str(run), "--recover", env={MARKER: marker},
                            timeout=RUN_SECONDS)
        assert recovered.returncode == 0, f"{context}\n{recovered.stderr[-3000:]}"
        assert_nothing_left(marker)
        actual = load_file(str(run / FINAL))
        for name in expected_final:
            assert torch.equal(expected_final[name], actual[name]), f"{name} differs ({context})"
        archive = archived_weights(run)
        assert archive.keys() == expected_archive.keys()
        for name in expected_archive:
            assert torch.equal(expected_archive[name], archive[name]), f"archived {name} differs ({context})"
        assert metrics_without_duration(run) == expected_metrics, context
    print(f"{inside_a_write} of {len(SEEDS)} kills landed inside a checkpoint write")
    assert inside_a_write >= 1, "no kill landed while a checkpoint was being written"
    assert time.monotonic() - started < TOTAL_SECONDS


def metrics_without_duration(directory: Path) -> dict:
    metrics = json.loads((directory / "metrics.json").read_text())
    metrics.pop("training_duration")
    return metrics
