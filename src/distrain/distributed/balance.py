"""Shares of the global batch from measured speeds: pure arithmetic, no clocks, no processes.

HetSeq trains on mixed cards by padding slow ones with dummy batches; here every worker's share of
each global batch follows its measured speed instead, so all finish a step at about the same time.
The update does not change (the loss is weighted by sample counts), only the wall-clock time.

:func:`proportional_shares` turns speeds into integer shares summing to the global batch;
:func:`next_shares` is one re-balancing decision: ignore changes within ``tolerance`` (hysteresis,
so timing noise does not make shares flap) and move each share by at most ``max_change`` of the
global batch (a brief stall does not swing the whole batch to one worker).
"""

from __future__ import annotations

import math
from typing import Sequence



def split_counts(total: int, shares: tuple[float, ...]) -> list[int]:
    """Split ``total`` samples proportionally to ``shares`` (largest remainder; ties go to lower ranks).

    Plain Python: it runs once per batch on a handful of numbers, where numpy's call overhead dominates.
    """
    weight = float(sum(shares))
    exact = [total * share / weight for share in shares]
    counts = [int(value) for value in exact]
    remainder = total - sum(counts)
    if remainder:
        order = sorted(range(len(shares)), key=lambda rank: (counts[rank] - exact[rank], rank))
        for rank in order[:remainder]:
            counts[rank] += 1
    return counts


def proportional_shares(speeds: Sequence[float], total: int) -> list[int]:
    """Integers summing to ``total``, proportional to ``speeds``; every worker keeps at least one
    sample while ``total`` allows (a worker with none could never be measured again)."""
    if not speeds:
        raise ValueError("no workers to share among")
    if any(not math.isfinite(speed) or speed <= 0 for speed in speeds):
        raise ValueError(f"speeds must be positive and finite, got {list(speeds)}")
    counts = split_counts(total, tuple(speeds))
    if total >= len(counts):
        for rank, count in enumerate(counts):
            if count == 0:
                donor = max(range(len(counts)), key=lambda r: (counts[r], -r))
                counts[donor] -= 1
                counts[rank] = 1
    return counts


def next_shares(
    current: Sequence[int], seconds_per_sample: Sequence[float], max_change: float, tolerance: float
) -> list[int]:
    """The shares after one re-balancing window (``seconds_per_sample``: each worker's mean over it).

    Returns ``current`` unchanged when no share would move by more than ``tolerance`` × the global
    batch; otherwise moves toward the proportional target, no share by more than ``max_change`` ×
    the global batch (give or take the one sample rounding needs).
    """
    total = sum(current)
    target = proportional_shares([1.0 / seconds for seconds in seconds_per_sample], total)
    moves = [wanted - now for wanted, now in zip(target, current)]
    largest = max(abs(move) for move in moves)
    if largest <= tolerance * total:
        return list(current)
    step = min(1.0, max(1.0, max_change * total) / largest)
    if step == 1.0:
        return target
    return proportional_shares([now + step * move for now, move in zip(current, moves)], total)
