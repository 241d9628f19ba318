"""Give freed host memory back to the OS promptly: glibc malloc's mmap threshold, fixed.

glibc serves an allocation above its mmap threshold with a mapping of its own, returned to the OS
when freed; but each such free raises the threshold to that size (up to 32 MiB), so later tensors of
that size come from the heap, whose freed space stays with the process. A sharded rank gathers and
frees whole layers (and, for a full checkpoint, whole optimizer states) again and again, so its
resident memory climbs far above what it ever holds at once. ``scripts/bench_sharding.py`` (77 M
parameters, AdamW, 2 FSDP ranks): the rank that never holds the whole model peaked at 1,399 MiB with
the dynamic threshold and at 1,135 MiB with this fixed 4 MiB one (1,084 / 991 MiB after its first step).
Smaller allocations keep the heap's speed.

Only sharded ranks fix it (the FSDP strategy, before the model is built): a replicated (DDP) worker
holds the same tensors step after step, and mapping each one of 4 MiB or more afresh costs page
faults every step: the hand-written DDP loop of ``scripts/bench_scaling.py`` (activations of 4 MiB)
trained 8% slower with the fixed threshold (509 -> 468 examples/s, 3 alternating rounds).
"""

from __future__ import annotations

import ctypes
import os
import sys

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
THRESHOLD_BYTES = 4 * 2**20


def fix_mmap_threshold(size: int = THRESHOLD_BYTES) -> bool:
    """Fix glibc's mmap threshold at ``size`` for this process; whether it was set. Nothing where the
    C library is not glibc, or where the user set ``MALLOC_MMAP_THRESHOLD_`` themselves."""
    if not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return mallopt(M_MMAP_THRESHOLD, size) == 1
