"""Python's garbage collector kept out of a process's imports of torch and distrain.

Importing torch and the built-in components creates some 275,000 objects the collector tracks and
leaves almost no garbage (about 7,000 objects, under 1 MiB), yet its allocation counts still trigger
full collections that walk everything imported so far: three in the worker fork server's preload,
which took 1.24 s with them and 0.97 s without (medians of 5 alternating runs), and launch to first
step waits on that preload and on the parent's own imports. So the collector is paused while
importing, and what was imported, which lives as long as the process, is frozen afterwards: later
collections skip it, instead of making up for the paused ones at once.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator


def pause() -> None:
    gc.disable()


def freeze_and_resume() -> None:
    """Move every object so far to the collector's permanent generation, then collect again as usual."""
    gc.freeze()
    gc.enable()


@contextlib.contextmanager
def importing() -> Iterator[None]:
    """Run a block of imports without collections; what it created is frozen afterwards."""
    pause()
    try:
        yield
    finally:
        freeze_and_resume()
