"""Run the CLI as a user would: ``python -m distrain ARGS`` in a process of its own (forked from a warm parent,
:mod:`support.zygote`, one for each environment that importing reads; ``DISTRAIN_TEST_FRESH_CLI=1``: always a
fresh interpreter).

Workers of a multi-worker run started from a warm parent are forked from its CLI process
(``DISTRAIN_START_METHOD=fork``, the documented opt-in), which already holds what they import: a fork server is a
fresh interpreter importing torch, distrain and often transformers again, 8-15 s of this 2-core machine per run.
Tests of worker start-up (marked ``default_start_method``), fresh interpreters, the scripts and the tutorials start
them as a user's run does by default, from the fork server."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from support.paths import PLUGINS, ROOT

#: environment variables read while torch, glibc's malloc, OpenMP or Python import: a call that sets one
#: differently gets a warm parent started with its own (a test process's environment changes as its tests run). A
#: call tagged with a run marker gets a fresh interpreter: tests look for it in /proc/PID/environ, where a forked
#: child shows its parent's
IMPORT_TIME_ENVIRONMENT = ("PYTHON", "LD_", "GLIBC_", "MALLOC_", "OMP_", "MKL_", "KMP_", "TORCH", "CUDA", "HF_",
                           "TRANSFORMERS_", "TOKENIZERS_")

#: set (by tests/conftest.py) while a test marked ``default_start_method`` runs: its workers start as by default
DEFAULT_START_METHOD = "DISTRAIN_TEST_DEFAULT_START_METHOD"


def cli_environment(env: dict | None = None) -> dict:
    """The environment a CLI process gets in tests: test plugins importable, offline, a test cache."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(PLUGINS), environment.get("PYTHONPATH", "")]
    )
    environment.setdefault("HF_HUB_OFFLINE", "1")
    # tokenizers' thread pool: a process that used it forks no workers (it spawns them instead, seconds each)
    environment.setdefault("TOKENIZERS_PARALLELISM", "false")
    environment.setdefault("OMP_NUM_THREADS", str(threads_per_test_process()))
    environment.update(env or {})
    return environment


def threads_per_test_process() -> int:
    """The cores each test process (pytest-xdist's) may use for the CLI processes it starts: cores ÷ test processes,
    as distrain gives each of its workers. A CLI process with a thread per core beside another test process's runs
    slower, not faster (the parser tests: 63 s and 56 s with 2 threads, 52 s and 39 s with 1, beside another run)."""
    return max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m distrain ARGS`` in a process of its own; test plugins importable; output captured."""
    environment = cli_environment(env)
    if _warm(environment):
        warm = _Zygote.serving(environment)
        return warm.run(list(args), Path(cwd or os.getcwd()), environment, timeout)
    return subprocess.run(
        [sys.executable, "-m", "distrain", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment,
    )


def _warm(environment: dict) -> bool:
    """Whether this call's process comes from a warm parent; if so, its workers are forked from it (but in the tests
    of worker start-up)."""
    if os.environ.get("DISTRAIN_TEST_FRESH_CLI") == "1" or "DISTRAIN_TEST_RUN_MARKER" in environment:
        return False
    if os.environ.get(DEFAULT_START_METHOD) != "1":
        environment.setdefault("DISTRAIN_START_METHOD", "fork")
    return True


def warm_parent(environment: dict) -> str | None:
    """The socket of a warm parent started with ``environment`` as it is (for commands a shell runs: see
    :mod:`support.warm_client`); None where this session runs fresh interpreters."""
    if os.environ.get("DISTRAIN_TEST_FRESH_CLI") == "1":
        return None
    return _Zygote.serving(environment).socket


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
            child = self.start(argv, cwd, environment, out, err)
            try:
                status = child.wait(timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                raise subprocess.TimeoutExpired(["distrain", *argv], timeout, out.read_bytes(), err.read_bytes()) from None
            return subprocess.CompletedProcess(["distrain", *argv], status,
                                               out.read_text(errors="replace"), err.read_text(errors="replace"))

    def start(self, argv: list[str], cwd: Path, environment: dict, stdout: Path, stderr: Path) -> WarmProcess:
        """The child for ``argv``, running; its output appended to ``stdout`` and ``stderr`` (one file may be both)."""
        for path in (stdout, stderr):
            path.touch()
        request = {"argv": argv, "cwd": str(cwd), "env": environment, "stdout": str(stdout), "stderr": str(stderr)}
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(self.socket)
        connection.sendall(json.dumps(request).encode() + b"\n")
        return WarmProcess(connection)

    def stop(self) -> None:
        if self.process.stdin.closed:
            return
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class WarmProcess:
    """A CLI child forked by a warm parent, with the part of ``subprocess.Popen`` the tests use: ``pid``, ``poll``,
    ``wait``, ``send_signal``, ``kill``, ``returncode`` (the child is the warm parent's grandchild, not ours:
    its status comes over the connection)."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.received = b""
        self.pid = json.loads(self._line(None))["pid"]
        self.returncode: int | None = None

    def _line(self, timeout: float | None) -> bytes:
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.received:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.connection], [], [], left)[0]:
                raise subprocess.TimeoutExpired(["distrain", "pid"], timeout)
            chunk = self.connection.recv(4096)
            if not chunk:
                raise RuntimeError("the CLI's warm parent closed the connection without a status")
            self.received += chunk
        line, self.received = self.received.split(b"\n", 1)
        return line

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = json.loads(self._line(timeout))["status"]
            self.connection.close()
        return self.returncode

    def poll(self) -> int | None:
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_cli(*args: str, output: Path, env: dict | None = None) -> subprocess.Popen | WarmProcess:
    """``python -m distrain ARGS`` started, not waited for (a server): stdout and stderr both to ``output``; from the
    warm parent as :func:`run_cli` decides."""
    environment = cli_environment(env)
    if _warm(environment):
        return _Zygote.serving(environment).start(list(args), Path.cwd(), environment, output, output)
    with open(output, "w") as log:
        return subprocess.Popen([sys.executable, "-m", "distrain", *args], stdout=log, stderr=subprocess.STDOUT,
                                env=environment)
