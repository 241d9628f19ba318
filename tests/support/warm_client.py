"""``distrain ARGS`` in a tutorial's shell, run by the test session's warm parent (:mod:`support.zygote`) when the
tutorial test offers one: the same command line, working directory, environment, stdin, stdout, stderr, exit
status and signals as ``python -m distrain ARGS``, without importing torch and transformers again (2-5 s of this
2-core machine per command; the tutorials run about 60).

A fresh interpreter instead where no warm parent is offered (``python tests/support/docs.py``) or where this
command's environment differs from the warm parent's in what importing reads (see ``support.cli``). Workers of a
multi-worker run still start as a user's do by default: from distrain's fork server, a fresh interpreter.

The warm parent's child is not this process's: ``SIGINT``, ``SIGTERM`` and ``SIGHUP`` sent here are passed on to
it, and its status comes back over the connection. Standard library only: this runs before any import of note."""

import json
import os
import signal
import socket
import sys

#: see support.cli.IMPORT_TIME_ENVIRONMENT (not imported: this must start in milliseconds)
IMPORT_TIME_ENVIRONMENT = ("PYTHON", "LD_", "GLIBC_", "MALLOC_", "OMP_", "MKL_", "KMP_", "TORCH", "CUDA", "HF_",
                           "TRANSFORMERS_", "TOKENIZERS_")
SOCKET, IMPORT_ENVIRONMENT = "DISTRAIN_TEST_WARM_SOCKET", "DISTRAIN_TEST_WARM_IMPORT_ENVIRONMENT"


def import_environment(environment: dict) -> list:
    """What importing reads from ``environment``, comparable between the warm parent and a command (a
    ``PYTHONPATH`` with an entry twice reads as with it once)."""
    found = []
    for name, value in sorted(environment.items()):
        if name == "PYTHONPATH":
            value = os.pathsep.join(dict.fromkeys(entry for entry in value.split(os.pathsep) if entry))
        if name.startswith(IMPORT_TIME_ENVIRONMENT):
            found.append([name, value])
    return found


def fresh_interpreter() -> None:
    os.execv(sys.executable, [sys.executable, "-m", "distrain", *sys.argv[1:]])


def main() -> None:
    environment = {name: value for name, value in os.environ.items() if name not in (SOCKET, IMPORT_ENVIRONMENT)}
    if SOCKET not in os.environ or json.loads(os.environ[IMPORT_ENVIRONMENT]) != import_environment(environment):
        fresh_interpreter()
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(os.environ[SOCKET])
    except OSError:  # the test session is gone
        fresh_interpreter()
    own = f"/proc/{os.getpid()}/fd"
    request = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": environment,
               "stdin": f"{own}/0", "stdout": f"{own}/1", "stderr": f"{own}/2"}
    connection.sendall(json.dumps(request).encode() + b"\n")
    replies = connection.makefile("r")
    child = json.loads(replies.readline())["pid"]
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda received, frame: os.kill(child, received))
    status = json.loads(replies.readline())["status"]
    if status < 0:  # ended by a signal: end the same way
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main()
