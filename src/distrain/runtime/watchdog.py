"""The hang watchdog: a worker that makes no progress for ``distributed.timeout`` seconds shows where.

Progress is a heartbeat: every batch a loader yields and every distrain collective. A thread in each
worker wakes when the last beat is older than the timeout, writes the Python stack of every thread
(``faulthandler.dump_traceback``) to the worker's ``out_worker{rank}.log``, records the function
its main thread is in (and whether that is a collective, i.e. the rank arrived and waits for the
others) in the launcher's report folder, and after a few seconds without a new beat ends the worker
with status 1. The launcher then names the ranks that did not arrive (:func:`hang_message`). The
process group's own timeout is set :data:`GRACE` seconds later, so the watchdog speaks first.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path

from distrain.job.heartbeat import beat, last_beat

logger = logging.getLogger(__name__)

#: seconds the process group's timeout exceeds the watchdog's, so stacks are written before it fires
GRACE = 10.0
#: seconds a worker waits after writing its stack (for the others to write theirs) before it ends
SETTLE = 2.0
#: innermost frames in these files mean the rank arrived and waits for the others
_WAITING = ("torch/distributed/", "torch/autograd/", "torch/nn/parallel/", "distrain/distributed/collectives.py")

_stop = threading.Event()


def start(rank: int, timeout: float, log_path: Path | None, report_dir: str | None = None) -> None:
    """Watch this worker from a daemon thread until :func:`stop`."""
    _stop.clear()
    beat()
    thread = threading.Thread(target=_watch, args=(rank, timeout, log_path, report_dir),
                              name="distrain-watchdog", daemon=True)
    thread.start()


def stop() -> None:
    _stop.set()


def _watch(rank: int, timeout: float, log_path: Path | None, report_dir: str | None) -> None:
    main = threading.main_thread().ident
    while not _stop.wait(min(1.0, timeout / 10)):
        silent = time.monotonic() - last_beat()
        if silent < timeout:
            continue
        frame = sys._current_frames().get(main)
        where = _innermost(frame)
        logger.error("watchdog: rank %d made no progress for %.0f s; it is in %s (%s:%d); stacks of all threads follow",
                     rank, silent, where["function"], where["file"], where["line"])
        for handler in logging.getLogger().handlers:
            handler.flush()
        if log_path is not None:
            with open(log_path, "a") as log:
                faulthandler.dump_traceback(log, all_threads=True)
        else:
            faulthandler.dump_traceback(sys.stderr, all_threads=True)
        if report_dir is not None:
            from distrain.job.disk import write_text_atomically  # only when a hang is reported

            report = Path(report_dir) / f"rank{rank}.json"
            write_text_atomically(report, json.dumps({"rank": rank, "seconds": silent, **where}))
        fired = last_beat()
        if _stop.wait(SETTLE) or last_beat() != fired:
            # progress after all (or the worker is finishing): withdraw the report, keep watching
            if report_dir is not None:
                (Path(report_dir) / f"rank{rank}.json").unlink(missing_ok=True)
            continue
        logger.error("watchdog: rank %d is stuck; ending this worker", rank)
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(1)


def _innermost(frame) -> dict:
    if frame is None:
        return {"function": "?", "file": "?", "line": 0, "waiting": False}
    code = frame.f_code
    filename = code.co_filename.replace(os.sep, "/")
    return {"function": code.co_name, "file": code.co_filename, "line": frame.f_lineno,
            "waiting": any(part in filename for part in _WAITING)}


def hang_message(report_dir: str | Path, timeout: float) -> str | None:
    """One line naming the ranks that did not arrive and where each was; None if no rank reported."""
    reports = []
    for path in sorted(Path(report_dir).glob("rank*.json")):
        try:
            reports.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    if not reports:
        return None
    reports.sort(key=lambda r: r["rank"])
    missing = [r for r in reports if not r["waiting"]] or reports
    waiting = [r for r in reports if r["waiting"] and r not in missing]
    names = "; ".join(f"rank {r['rank']} in {r['function']} ({r['file']}:{r['line']})" for r in missing)
    message = f"hang: no progress for {timeout:g} s; did not arrive: {names}"
    if waiting:
        message += "; waiting in a collective: " + ", ".join(f"rank {r['rank']} ({r['function']})" for r in waiting)
    return message + " (stacks in each out_worker{rank}.log)"
