"""Pure helpers the peer benchmarks share (bench_peers.py, bench_llm.py): how cores and a global batch are
split over processes, and how rounds are summarised. Importing this registers nothing."""

from __future__ import annotations

import statistics


def threads_per_process(cores: int, processes: int) -> int:
    """The torch threads each process gets: the cores shared evenly, at least one."""
    return max(1, cores // max(1, processes))


def per_process_batch(global_batch: int, processes: int) -> int:
    if global_batch % processes:
        raise ValueError(f"global batch {global_batch} does not split evenly over {processes} processes")
    return global_batch // processes


def median_and_range(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)
