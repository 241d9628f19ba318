"""This process's last sign of progress: a loader beats for every batch it hands out, and the hang
watchdog (:mod:`distrain.runtime.watchdog`) reads when it last did. Kept in job/, below both, so data/
needs nothing from the process runtime and runtime/ nothing from data/."""

from __future__ import annotations

import time

_last_beat = time.monotonic()


def beat() -> None:
    """Progress (a plain store; costs nanoseconds)."""
    global _last_beat
    _last_beat = time.monotonic()


def last_beat() -> float:
    """The ``time.monotonic()`` of the latest :func:`beat`."""
    return _last_beat
