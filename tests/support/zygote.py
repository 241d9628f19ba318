"""A warm parent for the suite's CLI processes: it imports torch and distrain once, then forks one child per
``run_cli`` call. A fresh ``python -m distrain`` spends 2-3 s of this 2-core machine importing before it does
anything, and the suite starts hundreds of them.

Each child is still a process of its own, as a user's would be: its own working directory, environment,
stdin (``/dev/null``), stdout and stderr (files the caller reads), ``sys.argv`` and ``__main__`` as
``python -m distrain`` sets them, and its own exit status or signal. What it cannot get from a warm parent is
what torch and the C libraries read from the environment while importing; :mod:`support.cli` starts a fresh
interpreter for a call that changes any of that (see ``IMPORT_TIME_ENVIRONMENT`` there).

Protocol, one connection per call on a Unix socket: the caller sends one JSON line (``argv``, ``cwd``, ``env``,
``stdout``, ``stderr``: two file paths; ``stdin``: a path, ``/dev/null`` if left out) and reads two: ``{"pid": N}`` when the child runs, then
``{"status": S}`` (``subprocess``'s convention: the exit code, or minus the signal that ended it).

Usage (by :mod:`support.cli`): ``python zygote.py SOCKET_PATH``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys


#: what most CLI calls import first: torch is 2 s of it, transformers' Llama (the decoder tests') 6 s more
PRELOAD = ("torch", "distrain.cli", "distrain.commands.check", "distrain.commands.train", "distrain.experiment.assemble",
           "transformers", "transformers.models.llama.modeling_llama", "transformers.models.bert.modeling_bert")


def preload() -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)


def serve(path: str) -> dict | None:
    """Accept calls until the caller goes away; in a forked child, return its call instead."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the monitors below are reaped by the kernel
    os.write(1, b"ready\n")  # the caller waits for this line before connecting
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in readable:  # the caller closed our stdin, or is gone
            return None
        connection, _ = listener.accept()
        with connection:
            request = json.loads(connection.makefile("r").readline())
            if os.fork() == 0:  # the monitor: it never returns to this loop
                try:
                    return monitor(listener, connection, request)  # returns in the CLI child alone
                except BaseException:
                    os._exit(1)


def monitor(listener: socket.socket, connection: socket.socket, request: dict) -> dict:
    """Fork the CLI child (which returns its request), report its pid, wait for it, report its status."""
    listener.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the child's own children are waited for, as anywhere
    child = os.fork()
    if child == 0:
        connection.close()
        return request
    try:
        connection.sendall(json.dumps({"pid": child}).encode() + b"\n")
        _, status = os.waitpid(child, 0)
        connection.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    finally:
        os._exit(0)


def become(request: dict) -> None:
    """Turn this forked child into ``python -m distrain ARGV`` run in ``cwd`` with ``env``."""
    import runpy

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, name, flags in ((0, request.get("stdin", os.devnull), os.O_RDONLY),
                            (1, request["stdout"], os.O_WRONLY | os.O_APPEND),
                            (2, request["stderr"], os.O_WRONLY | os.O_APPEND)):
        opened = os.open(name, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.path[0] = os.getcwd()  # as ``-m`` sets it, where this script's folder stood
    sys.argv = ["-m", *request["argv"]]
    try:
        runpy.run_module("distrain", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
        if not isinstance(exit_.code, int | None):
            print(exit_.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - reported as the interpreter reports it
        sys.excepthook(*sys.exc_info())
        code = 1
    exit_as_the_interpreter_would(code)


def exit_as_the_interpreter_would(code: int) -> None:
    """What ``Py_FinalizeEx`` does that anyone can see (wait for threads, atexit handlers, flushed streams),
    without tearing down torch's modules one by one (most of a second here)."""
    import atexit
    import threading

    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # the interpreter's status when flushing fails at exit
    os._exit(code)


if __name__ == "__main__":
    preload()
    call = serve(sys.argv[1])
    if call is not None:
        become(call)
    else:  # the caller is done: its folder for our socket goes with us
        import shutil

        shutil.rmtree(os.path.dirname(sys.argv[1]), ignore_errors=True)
