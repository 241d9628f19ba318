"""Run the CLI as a user would: ``python -m distrain ARGS`` in a process of its own (forked from a warm parent,
:mod:`support.zygote`, one for each environment that importing reads; ``DISTRAIN_TEST_FRESH_CLI=1``: always a
fresh interpreter)."""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from support.paths import PLUGINS, ROOT

#: environment variables read while torch, glibc's malloc, OpenMP or Python import: a call that sets one
#: differently gets a warm parent started with its own (a test process's environment changes as its tests run). A
#: call tagged with a run marker gets a fresh interpreter: tests look for it in /proc/PID/environ, where a forked
#: child shows its parent's
IMPORT_TIME_ENVIRONMENT = ("PYTHON", "LD_", "GLIBC_", "MALLOC_", "OMP_", "MKL_", "KMP_", "TORCH", "CUDA", "HF_",
                           "TRANSFORMERS_", "TOKENIZERS_")


def cli_environment(env: dict | None = None) -> dict:
    """The environment a CLI process gets in tests: test plugins importable, offline, a test cache."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(PLUGINS), environment.get("PYTHONPATH", "")]
    )
    environment.setdefault("HF_HUB_OFFLINE", "1")
    environment.update(env or {})
    return environment


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m distrain ARGS`` in a process of its own; test plugins importable; output captured."""
    environment = cli_environment(env)
    if os.environ.get("DISTRAIN_TEST_FRESH_CLI") != "1" and not _marked(environment):
        warm = _Zygote.serving(environment)
        return warm.run(list(args), Path(cwd or os.getcwd()), environment, timeout)
    return subprocess.run(
        [sys.executable, "-m", "distrain", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment,
    )


def _marked(environment: dict) -> bool:
    return "DISTRAIN_TEST_RUN_MARKER" in environment


def _import_time(environment: dict) -> tuple:
    return tuple(sorted((name, value) for name, value in environment.items() if name.startswith(IMPORT_TIME_ENVIRONMENT)))


class _Zygote:
    """This test process's warm parents, one for each environment that importing reads (started at the first call
    that needs it; the two used last are kept, the others stopped; all stopped at exit)."""

    _instances: dict[tuple, _Zygote] = {}
    _lock = threading.Lock()

    @classmethod
    def serving(cls, environment: dict) -> _Zygote:
        key = _import_time(environment)
        with cls._lock:
            if key not in cls._instances:
                cls._instances[key] = cls(environment)
            cls._instances[key] = cls._instances.pop(key)  # the last used goes last
            while len(cls._instances) > 2:
                cls._instances.pop(next(iter(cls._instances))).stop()
            return cls._instances[key]

    def __init__(self, environment: dict) -> None:
        self.folder = tempfile.mkdtemp(prefix="distrain-zygote-")
        self.socket = os.path.join(self.folder, "socket")
        self.environment = environment
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("zygote.py")), self.socket],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.environment,
                                        cwd=self.folder)
        ready = self.process.stdout.readline()
        if ready != b"ready\n":
            raise RuntimeError(f"the CLI's warm parent did not start: {ready!r}")
        atexit.register(self.stop)

    def run(self, argv: list[str], cwd: Path, environment: dict, timeout: float) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="distrain-cli-") as folder:
            out, err = Path(folder, "stdout"), Path(folder, "stderr")
            out.touch()
            err.touch()
            request = {"argv": argv, "cwd": str(cwd), "env": environment, "stdout": str(out), "stderr": str(err)}
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(self.socket)
                connection.sendall(json.dumps(request).encode() + b"\n")
                replies = connection.makefile("r")
                pid = json.loads(replies.readline())["pid"]
                connection.settimeout(timeout)
                try:
                    status = json.loads(replies.readline())["status"]
                except TimeoutError:
                    os.kill(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired(["distrain", *argv], timeout,
                                                    out.read_bytes(), err.read_bytes()) from None
            return subprocess.CompletedProcess(["distrain", *argv], status,
                                               out.read_text(errors="replace"), err.read_text(errors="replace"))

    def stop(self) -> None:
        if self.process.stdin.closed:
            return
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
