"""How glibc malloc treats a training process's freed host memory, chosen by what the process does.

glibc serves an allocation above its mmap threshold with a mapping of its own, returned to the OS
when freed; smaller ones come from the heap, whose free top is returned once it exceeds the trim
threshold. By default both thresholds move: each free of a mapping raises the mmap threshold to its
size (up to 32 MiB) and the trim threshold to twice that. A training step allocates and frees the
same tensors step after step, so memory handed back to the OS at the end of one step is faulted in
again, page by page, in the next. Which way is right depends on the strategy:

- :func:`keep_step_memory`, for replicated (DDP) and single-process training on the CPU: a step's
  activations stay in the heap for the next step (mmap threshold at its 32 MiB maximum, trim threshold
  1 GiB). ``scripts/bench_scaling.py``'s workers took ~5,000 page faults per step with the moving
  thresholds (the hand-written loop, by the luck of its allocation order, ~1,500), and ~40 with
  these. On a small model the process's peak is unchanged (it reaches the step's high-water mark
  every step anyway); what changes is that it stays there. A large model pays for the kept heap in
  peak RSS: ``scripts/bench_sharding.py``'s 302 M parameters with AdamW on one process peaked at
  5,674 MiB, against 5,156 MiB with glibc's own policy.
- :func:`fix_mmap_threshold`, for sharded ranks: they gather and free whole layers (and, for a full
  checkpoint, whole optimizer states) again and again, and with the moving threshold those landed in
  the heap and stayed, so resident memory climbed far above what a rank ever holds at once.
  ``scripts/bench_sharding.py --layers 6`` (77 M parameters, AdamW, 2 FSDP ranks): the rank that
  never holds the whole model peaked at 1,399 MiB with the moving threshold and at 1,135 MiB with a
  fixed 4 MiB one (1,084 / 991 MiB after its first step). A DDP worker with that fixed threshold maps
  its 4 MiB activations afresh every step: the hand-written DDP loop of ``scripts/bench_scaling.py``
  trained 8% slower with it (509 -> 468 examples/s, 3 alternating rounds).

A user's own malloc settings (``MALLOC_*_`` variables or ``glibc.malloc`` tunables) always win.
"""

from __future__ import annotations

import ctypes
import os
import sys

# glibc's mallopt parameters
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 4 * 2**20
#: the largest mmap threshold glibc accepts on 64-bit systems (and its moving threshold's ceiling)
MAX_MMAP_THRESHOLD_BYTES = 32 * 2**20
KEPT_HEAP_BYTES = 2**30
#: environment variables through which a user tunes glibc malloc themselves
_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")


def keep_step_memory() -> bool:
    """Keep freed allocations below 32 MiB in this process's heap (up to 1 GiB of free top) rather
    than returning them to the OS; whether it was set. For processes that repeat the same steps."""
    return _set_malloc({M_MMAP_THRESHOLD: MAX_MMAP_THRESHOLD_BYTES, M_TRIM_THRESHOLD: KEPT_HEAP_BYTES})


def fix_mmap_threshold(size: int = THRESHOLD_BYTES) -> bool:
    """Fix glibc's mmap threshold at ``size`` for this process, so freed allocations of that size or
    more go back to the OS at once; whether it was set."""
    return _set_malloc({M_MMAP_THRESHOLD: size})


def _set_malloc(settings: dict[int, int]) -> bool:
    """``mallopt`` each setting; nothing where the C library is not glibc, or where the user tuned
    malloc themselves."""
    if not sys.platform.startswith("linux") or _user_tuned_malloc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return all(mallopt(parameter, value) == 1 for parameter, value in settings.items())


def _user_tuned_malloc() -> bool:
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    return any(name in os.environ for name in _USER_SETTINGS) or "glibc.malloc." in tunables
