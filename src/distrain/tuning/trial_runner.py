"""One trial = one ``distrain train`` subprocess in ``DIR/trial_NNNN/``.

A subprocess (not a thread or an in-process call) so that a trial's crash, non-finite loss or memory
blow-up cannot take the search down, ``--n-jobs`` trials get disjoint CPU sets and thread counts, and
killing ``distrain tune`` ends its trials with it: each trial process gets SIGTERM when its parent dies
(Linux ``PR_SET_PDEATHSIG``), so it checkpoints and stops like any pre-empted run.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distrain.tuning.pruning import PRUNED_FILE

TRIAL_FILE = "trial.json"


@dataclass
class TrialOutcome:
    state: str  # "COMPLETE", "PRUNED" or "FAIL"
    value: float | None
    epochs: int
    message: str
    seconds: float


def trial_dir_name(number: int) -> str:
    return f"trial_{number:04d}"


def objective_of(config: dict[str, Any]) -> tuple[str, str]:
    """``(metric name, "maximize" | "minimize")`` from ``trainer.validation_metric`` (default ``-loss``)."""
    metric = (config.get("trainer") or {}).get("validation_metric", "-loss")
    return metric[1:], "maximize" if metric.startswith("+") else "minimize"


def run_trial(
    config: dict[str, Any], config_file: Path, trial_dir: Path, log_file: Path, pruning: dict[str, Any],
    include_packages: list[str], cpus: set[int] | None = None,
) -> TrialOutcome:
    """Train ``config`` (already written to ``config_file``) with the pruning callback added."""
    callbacks = list((config.get("trainer") or {}).get("callbacks") or []) + [{"type": "optuna_pruning", **pruning}]
    command = [
        sys.executable, "-m", "distrain", "train", str(config_file), "-s", str(trial_dir),
        "-o", json.dumps({"trainer.callbacks": callbacks, "trainer.progress_bar": False}),
        "--include-package", "distrain.tuning.pruning",
    ]
    for package in include_packages:
        command += ["--include-package", package]
    env = dict(os.environ)
    if cpus:
        threads = str(len(cpus))
        env.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    started = time.monotonic()
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "w") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, preexec_fn=_child_setup(os.getpid(), cpus)
        )
        try:
            status = process.wait()
        except BaseException:
            process.terminate()  # Ctrl-C: the trial checkpoints and stops too
            process.wait()
            raise
    outcome = read_outcome(config, trial_dir, status, log_file, time.monotonic() - started)
    return outcome


def _child_setup(parent_pid: int, cpus: set[int] | None):
    """What the trial process does between fork and exec. Only async-signal-safe work happens there: the
    libc function is looked up here, in the parent (an import after fork can deadlock on a lock another
    thread of the parent held, e.g. the heartbeat thread)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None

    def setup() -> None:
        if prctl is not None:
            prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG: SIGTERM when distrain tune dies
        if os.getppid() != parent_pid:  # it died before prctl took effect
            os._exit(1)
        if cpus:
            os.sched_setaffinity(0, cpus)

    return setup


def read_outcome(config: dict[str, Any], trial_dir: Path, status: int, log_file: Path, seconds: float) -> TrialOutcome:
    """What the run left behind: metrics.json, pruned.json, or the error its log ends with."""
    metric, _ = objective_of(config)
    epochs = epochs_trained(trial_dir)
    pruned = trial_dir / PRUNED_FILE
    if status == 0 and pruned.is_file():
        record = json.loads(pruned.read_text())
        return TrialOutcome("PRUNED", record.get("value"), epochs, f"pruned after epoch {record['epoch']}", seconds)
    if status != 0:
        return TrialOutcome("FAIL", None, epochs, f"exit status {status}: {last_error(log_file)}", seconds)
    metrics = json.loads((trial_dir / "metrics.json").read_text())
    value = metrics.get(f"best_validation_{metric}", metrics.get(f"training_{metric}"))
    if value is None or not math.isfinite(value):
        return TrialOutcome("FAIL", None, epochs, f"no finite {metric} in {trial_dir / 'metrics.json'}", seconds)
    return TrialOutcome("COMPLETE", float(value), epochs, "", seconds)


def epochs_trained(trial_dir: Path) -> int:
    return len(list(trial_dir.glob("metrics_epoch_*.json")))


def last_error(log_file: Path) -> str:
    """The run's ``error: ...`` line, else its last non-empty line."""
    try:
        lines = [line.strip() for line in log_file.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    errors = [line for line in lines if line.startswith("error:")]
    if errors:
        return errors[-1][len("error:"):].strip()
    return lines[-1] if lines else "no output"


def write_trial_record(trial_dir: Path, record: dict[str, Any]) -> None:
    """``trial.json`` in the trial folder: number, state, parameters, value, epochs, message."""
    if trial_dir.is_dir():
        (trial_dir / TRIAL_FILE).write_text(json.dumps(record, indent=2))
