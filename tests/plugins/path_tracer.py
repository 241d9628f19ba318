"""Records the calls into distrain's own files on a process's main thread, for ``test_layout``'s walk of the
path from ``distrain train`` to the loop's step.

With ``PATH_TRACE`` naming a folder, importing this module starts tracing (``sys.settrace``, calls only, no
line events): the parent through :func:`main` (``python -c "import path_tracer; path_tracer.main()" train
...``, so ``cli.main`` itself is seen), each spawned worker when it imports its plugins (``--include-package
path_tracer``; the distrain frames already on its stack, ``_spawned_entry`` and ``import_plugins``, are
recorded first). Each process writes ``PATH_TRACE/<pid>.json`` once and stops tracing: a worker at its first
``GradientDescentTrainer._forward``, the parent when it starts its workers (torch's ``start_processes``).

A record is ``[serial, caller serial, file, function]``: ``file`` relative to ``src/distrain``, the caller the
nearest distrain frame below (-1: none); ``rank`` is a spawned worker's global rank; ``spine`` lists the serials of the distrain frames on the stack when
the trace stopped, outermost first. A generator counts when it starts, not at each resumption.
"""

from __future__ import annotations

import dis
import inspect
import json
import os
import sys
from pathlib import Path

import distrain

SOURCE = str(Path(distrain.__file__).parent) + os.sep
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_RESUME = dis.opmap.get("RESUME")


class PathTracer:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.events: list[tuple[int, int, str, str]] = []
        self.serials: dict[int, int] = {}  # id(live frame) -> serial
        self.starts: dict[object, int] = {}  # generator code -> offset of its first RESUME

    def start(self, frame) -> None:
        """Record the distrain frames already on the stack (outermost first), then trace new calls."""
        stack = []
        while frame is not None:
            if frame.f_code.co_filename.startswith(SOURCE):
                stack.append(frame)
            frame = frame.f_back
        for frame in reversed(stack):
            self._record(frame)
        sys.settrace(self.trace)

    def trace(self, frame, event, arg):  # noqa: ARG002 - sys.settrace's signature
        if event != "call":
            return None
        code = frame.f_code
        if not code.co_filename.startswith(SOURCE):
            if code.co_name == "start_processes" and "torch/multiprocessing" in code.co_filename:
                self.finish(frame)  # the parent starts its workers: its part of the path ends here
            return None
        if code.co_flags & _GENERATOR_FLAGS and frame.f_lasti > self._first_resume(code):
            return None  # a generator resumed, not called
        self._record(frame)
        if code.co_name == "_forward" and code.co_filename.endswith("training/trainer.py"):
            self.finish(frame)
        return None

    def _first_resume(self, code) -> int:
        if code not in self.starts:
            offsets = [instruction.offset for instruction in dis.get_instructions(code) if instruction.opcode == _RESUME]
            self.starts[code] = offsets[0] if offsets else 0
        return self.starts[code]

    def _record(self, frame) -> None:
        caller = frame.f_back
        while caller is not None and not caller.f_code.co_filename.startswith(SOURCE):
            caller = caller.f_back
        serial = len(self.events)
        self.serials[id(frame)] = serial
        parent = self.serials.get(id(caller), -1) if caller is not None else -1
        self.events.append((serial, parent, frame.f_code.co_filename[len(SOURCE):], frame.f_code.co_name))

    def finish(self, frame) -> None:
        sys.settrace(None)
        spine = []
        rank = None
        while frame is not None:
            if id(frame) in self.serials and frame.f_code.co_filename.startswith(SOURCE):
                spine.append(self.serials[id(frame)])
            if frame.f_code.co_name == "_spawned_entry":
                rank = frame.f_locals.get("rank")
            frame = frame.f_back
        record = {"pid": os.getpid(), "rank": rank, "events": self.events, "spine": list(reversed(spine))}
        Path(self.folder, f"{os.getpid()}.json").write_text(json.dumps(record))


def main() -> None:
    """``distrain`` (arguments from ``sys.argv[1:]``) with this process traced from ``cli.main`` on."""
    from distrain.cli import main as cli_main

    sys.argv[0] = "distrain"
    PathTracer(os.environ["PATH_TRACE"]).start(sys._getframe())
    cli_main()


def _imported_by_distrain() -> bool:
    frame = sys._getframe()
    while frame is not None and not frame.f_code.co_filename.startswith(SOURCE):
        frame = frame.f_back
    return frame is not None


if os.environ.get("PATH_TRACE") and sys.gettrace() is None and _imported_by_distrain():
    PathTracer(os.environ["PATH_TRACE"]).start(sys._getframe())  # a worker, importing its plugins
