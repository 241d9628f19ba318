"""Helpers for the multi-process tests: start distrain as a user would and make sure that every
process a test started is gone afterwards (each run is tagged with a unique environment marker)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tarfile
import time
import uuid
from pathlib import Path
from typing import Callable, TypeVar

from support.paths import PLUGINS, ROOT

MARKER = "DISTRAIN_TEST_RUN_MARKER"
T = TypeVar("T")


def cli_environment(marker: str | None = None) -> dict[str, str]:
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(PLUGINS), environment.get("PYTHONPATH", "")])
    environment.setdefault("HF_HUB_OFFLINE", "1")
    environment[MARKER] = marker or uuid.uuid4().hex
    return environment


def start(arguments: list[str], environment: dict[str, str], **popen) -> subprocess.Popen:
    """``python ARGUMENTS`` in the background, output captured as text (unless redirected)."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([sys.executable, *arguments], env=environment, text=True, **popen)


def kill_job(process: subprocess.Popen, marker: str) -> None:
    """``kill -9`` every process of a job: its process group (the test started it in a new session)
    and every process carrying its environment marker (spawned workers, wherever they are)."""
    try:
        os.killpg(process.pid, 9)
    except (ProcessLookupError, PermissionError):
        pass
    # the kernel tears a killed process down after the signal, not with it (a worker with a large address space
    # shows as running for some milliseconds), and one forked in the instant of the kill escapes the first round:
    # kill what is still there until nothing is, for a few seconds; what outlives that survived kill -9
    deadline = time.monotonic() + 5.0
    while (left := tagged_processes(marker)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        time.sleep(0.05)
    process.wait(timeout=30)


def tagged_processes(marker: str) -> list[int]:
    """Live processes (not zombies) whose environment holds ``marker``."""
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry))
    return found


def assert_nothing_left(marker: str, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while tagged_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = tagged_processes(marker)
    for pid in left:  # clean up before failing, so one broken test does not slow the others
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    assert not left, f"processes left behind: {left}"


def free_port() -> int:
    """A port free at this moment; another process may take it before it is used, so whoever uses
    it goes through :func:`retry_if_port_taken`."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


PORT_TAKEN = ("address already in use", "eaddrinuse", "errno 98")


def retry_if_port_taken(run: Callable[[int, int], tuple[T, str]], attempts: int = 3) -> T:
    """``run(port, attempt)`` with a port that was free a moment ago; when the run's output (the second
    item it returns) says the port was taken meanwhile by someone else, run again with a new port."""
    for attempt in range(attempts):
        value, output = run(free_port(), attempt)
        if attempt == attempts - 1 or not any(sign in output.lower() for sign in PORT_TAKEN):
            return value
    raise AssertionError("unreachable")


def wait_for(condition: Callable[[], bool], timeout: float, what: str, process: subprocess.Popen | None = None,
             interval: float = 0.05) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds or when ``process`` ended first."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process is None or process.poll() is None, f"the process ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(interval)


def archived_weights(serialization_dir: Path) -> dict:
    from safetensors.torch import load

    with tarfile.open(serialization_dir / "model.tar.gz") as tar:
        return load(tar.extractfile("weights.safetensors").read())


def max_weight_difference(first: Path, second: Path) -> float:
    a, b = archived_weights(first), archived_weights(second)
    assert a.keys() == b.keys()
    return max(float((a[name] - b[name]).abs().max()) for name in a)


def unequal_weights(first: Path, second: Path) -> list[str]:
    """The names of the archived tensors that are not bitwise equal (dtype, shape and every bit)."""
    import torch

    a, b = archived_weights(first), archived_weights(second)
    assert a.keys() == b.keys()
    return sorted(name for name in a if not torch.equal(a[name], b[name]))


def final_metrics(serialization_dir: Path) -> dict:
    return json.loads((serialization_dir / "metrics.json").read_text())


def train_digits(digits: Path, out: Path, batch_size: int, distributed: dict | None, overrides: dict | None = None,
                 flags: tuple[str, ...] = ()) -> Path:
    """``configs/digits_mlp.jsonnet`` trained for 2 epochs on the prepared ``digits`` by ``distrain train`` (with
    ``distributed`` as its block, ``overrides`` and ``flags`` added): its run folder."""
    from support.cli import run_cli

    settings = {
        "train_data_path": str(digits / "train.jsonl"),
        "validation_data_path": str(digits / "validation.jsonl"),
        "data_loader.batch_size": batch_size,
        "trainer.num_epochs": 2,
        "trainer.progress_bar": False,
        **(overrides or {}),
    }
    if distributed is not None:
        settings["distributed"] = distributed
    result = run_cli("train", str(ROOT / "configs" / "digits_mlp.jsonnet"), "-s", str(out), "-o", json.dumps(settings),
                     *flags, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    return out
