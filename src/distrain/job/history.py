"""A run's history, ``DIR/history.jsonl``: one JSON line per thing that happened to the run, appended as it
happens and never rewritten: started, stopped (and why), restarted by the launcher (and why), resumed (from
which checkpoint, on how many workers), finished.

``metrics.json`` says where a run ended; this says how it got there. A ``kill -9`` leaves no line of its own
(nothing runs to write it), so a ``recover`` line after no ``stopped`` shows one. Lines are appended
with one ``write`` each; one the disk takes only in part is cut off again, and a line cut short anyway is
skipped when read (the next starts on a line of its own). Writing it never fails a run: a disk that refuses
the line is the disk the run reports itself.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

HISTORY_FILE = "history.jsonl"


def record(serialization_dir: Path | str | None, event: str, **details: Any) -> None:
    """Append ``{"event": event, "time": now, **details}`` to the run's history (quietly, if at all)."""
    if serialization_dir is None:
        return
    line = {"event": event, "time": datetime.datetime.now().isoformat(timespec="milliseconds"), **details}
    data = (json.dumps(line, default=str) + "\n").encode()
    path = Path(serialization_dir) / HISTORY_FILE
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError:
        return
    try:
        size = os.fstat(descriptor).st_size
        if _ends_mid_line(descriptor):
            data = b"\n" + data
        try:
            if os.write(descriptor, data) != len(data):  # a disk that filled mid-line: no line rather than half
                os.ftruncate(descriptor, size)
        except OSError:
            os.ftruncate(descriptor, size)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def read(serialization_dir: Path | str) -> list[dict[str, Any]]:
    """The run's events, oldest first; a line cut short is left out."""
    path = Path(serialization_dir) / HISTORY_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and "event" in event:
            events.append(event)
    return events


def _ends_mid_line(descriptor: int) -> bool:
    size = os.fstat(descriptor).st_size
    return size > 0 and os.pread(descriptor, 1, size - 1) != b"\n"
