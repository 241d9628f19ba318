"""Run the CLI as a user would: ``python -m distrain ARGS`` in a process of its own (forked from a warm parent,
:mod:`support.zygote`, unless the call changes what importing reads; ``DISTRAIN_TEST_FRESH_CLI=1``: always a
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
#: differently from the warm parent gets a fresh interpreter; so does a call tagged with a run marker, which
#: tests look for in /proc/PID/environ (a forked child shows its parent's there)
IMPORT_TIME_ENVIRONMENT = ("PYTHON", "LD_", "GLIBC_", "MALLOC_", "OMP_", "MKL_", "KMP_", "TORCH", "CUDA", "HF_",
                           "TRANSFORMERS_", "TOKENIZERS_", "DISTRAIN_TEST_RUN_MARKER")


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
    warm = _Zygote.get() if os.environ.get("DISTRAIN_TEST_FRESH_CLI") != "1" else None
    if warm is not None and warm.serves(environment):
        return warm.run(list(args), Path(cwd or os.getcwd()), environment, timeout)
    return subprocess.run(
        [sys.executable, "-m", "distrain", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment,
    )


class _Zygote:
    """This test process's warm parent (one per process, started at the first call, stopped at exit)."""

    _instance: _Zygote | None = None
    _lock = threading.Lock()

    @classmethod
    def get(cls) -> _Zygote | None:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="distrain-zygote-")
        self.socket = os.path.join(self.folder, "socket")
        self.environment = cli_environment()
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("zygote.py")), self.socket],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.environment,
                                        cwd=self.folder)
        ready = self.process.stdout.readline()
        if ready != b"ready\n":
            raise RuntimeError(f"the CLI's warm parent did not start: {ready!r}")
        atexit.register(self.stop)

    def serves(self, environment: dict) -> bool:
        """Whether a child forked from here sees what a fresh interpreter with ``environment`` would."""
        names = set(environment) | set(self.environment)
        return all(environment.get(name) == self.environment.get(name)
                   for name in names if name.startswith(IMPORT_TIME_ENVIRONMENT))

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
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
