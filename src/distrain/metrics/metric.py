"""Metric base: keep sufficient statistics, reduce them across workers once, when read.

A metric adds counts and sums as batches pass (:meth:`accumulate`) and turns the summed statistics
into a value only in :meth:`get_metric`. Summing statistics over workers and then computing gives
exactly the single-process value; averaging per-worker averages would not.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch

from distrain.registry import Registrable

_SYNC = [True]


@contextlib.contextmanager
def local_only() -> Iterator[None]:
    """Read metrics from this worker's statistics alone (for progress bars: no collective call)."""
    _SYNC.append(False)
    try:
        yield
    finally:
        _SYNC.pop()


def syncing() -> bool:
    return _SYNC[-1]


class Metric(Registrable):
    """Subclasses implement ``__call__`` (calling :meth:`accumulate`) and :meth:`compute`."""

    def __init__(self) -> None:
        self._stats: dict[str, torch.Tensor] = {}

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        raise NotImplementedError

    def accumulate(self, **values: torch.Tensor | float) -> None:
        for name, value in values.items():
            value = torch.as_tensor(value).detach().to(torch.float64)
            current = self._stats.get(name)
            self._stats[name] = value if current is None else current + value.to(current.device)

    def compute(self, stats: dict[str, torch.Tensor]) -> float | dict[str, float]:
        raise NotImplementedError

    def reduced_state(self) -> dict[str, torch.Tensor]:
        """The statistics summed over all workers (every worker must call this together)."""
        from distrain.distributed.collectives import all_reduce_sum, is_distributed

        stats = self.state()
        if not syncing() or not is_distributed():
            return stats
        names = sorted(self.stat_names())
        stacked = torch.stack([stats.get(name, torch.zeros((), dtype=torch.float64)).cpu() for name in names])
        reduced = all_reduce_sum(stacked)
        return dict(zip(names, reduced))

    def stat_names(self) -> list[str]:
        """The names of all statistics, including those no batch has touched yet on this worker."""
        return sorted(self._stats)

    def get_metric(self, reset: bool = False) -> float | dict[str, float]:
        value = self.compute(self.reduced_state())
        if reset:
            self.reset()
        return value

    def reset(self) -> None:
        self._stats = {}

    def state(self) -> dict[str, torch.Tensor]:
        return {name: value.clone() for name, value in self._stats.items()}

    def load_state(self, state: dict[str, Any]) -> None:
        self._stats = {name: torch.as_tensor(value) for name, value in state.items()}
