"""Metric base: keep sufficient statistics, reduce them across workers once, when read.

A metric keeps two kinds of statistics while batches pass:

- **summed** (:attr:`Metric.summed`, filled by :meth:`Metric.accumulate`): counts and sums, scalars
  or 1-D vectors (e.g. one count per class). Workers add theirs up.
- **gathered** (:attr:`Metric.gathered`, filled by :meth:`Metric.collect`): per-item values a
  metric needs whole (AUC's scores, Spearman's pairs). Workers concatenate theirs, whatever their
  lengths.

Only :meth:`get_metric` turns statistics into a value, after one reduction over all workers.
Summing statistics and then computing gives exactly the single-process value; averaging
per-worker values would not. A worker that saw no data, or a vector shorter than another
worker's, takes part with zeros, so every worker makes the same collective calls.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar, Iterator, Sequence

import torch

from distrain.compat.deferred_compiler import defer_disable
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
    """Subclasses declare their statistics and implement ``__call__`` and :meth:`compute`.

    Every worker must declare the same names (they are class attributes for that reason).
    """

    #: statistics summed over workers: scalars or 1-D vectors (shorter ones are padded with zeros)
    summed: ClassVar[tuple[str, ...]] = ()
    #: statistics concatenated over workers in rank order: 1-D, one entry per item
    gathered: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__call__" in cls.__dict__:
            # Updates run eagerly even inside a compiled forward (trainer.compile): they read
            # values on the host and keep Python state, which would only break the graph.
            # defer_disable keeps the compiler unimported where nothing is compiled.
            update = cls.__dict__["__call__"]
            cls.__call__ = torch._disable_dynamo(update)
            defer_disable(update)

    def __init__(self) -> None:
        self._stats: dict[str, torch.Tensor] = {}
        self._pieces: dict[str, list[torch.Tensor]] = {}
        self.label_names: list[str] | None = None
        self._deferred: dict[str, torch.Tensor] = {}  # a check's message -> its violations, on the device

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        raise NotImplementedError

    def compute(self, stats: dict[str, torch.Tensor]) -> float | dict[str, float]:
        """The value from statistics summed/concatenated over all workers (absent: nothing seen)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------------ recording
    def accumulate(self, **values: torch.Tensor | float) -> None:
        """Add to summed statistics; a vector longer than the one held extends it with zeros."""
        for name, value in values.items():
            if name not in self.summed:
                raise KeyError(f"{type(self).__name__}: statistic {name!r} is not declared in `summed`")
            value = torch.as_tensor(value).detach().to(torch.float64)  # stays on its device until read
            current = self._stats.get(name)
            self._stats[name] = value if current is None else _add(current, value.to(current.device))

    def collect(self, **values: torch.Tensor) -> None:
        """Append per-item values to gathered statistics."""
        for name, value in values.items():
            if name not in self.gathered:
                raise KeyError(f"{type(self).__name__}: statistic {name!r} is not declared in `gathered`")
            self._pieces.setdefault(name, []).append(torch.as_tensor(value).detach().reshape(-1).to(torch.float64))

    def defer_check(self, violations: torch.Tensor, message: str) -> None:
        """Count a check's violations on the device; :meth:`state` (every read and save) raises
        ``ValueError(message)`` if there were any, without a host synchronisation per update."""
        held = self._deferred.get(message)
        self._deferred[message] = violations.detach() if held is None else held + violations.detach()

    def set_label_names(self, names: Sequence[str]) -> None:
        """The names of the class indices (from the vocabulary); the model tells its metrics."""
        self.label_names = list(names)

    # ------------------------------------------------------------------------------- reading
    def stat_names(self) -> list[str]:
        return sorted(self.summed + self.gathered)

    def reduced_state(self) -> dict[str, torch.Tensor]:
        """The statistics over all workers (every worker must call this together)."""
        from distrain.distributed.collectives import is_distributed, reports

        stats = self.state()
        if not syncing() or not is_distributed():
            return stats
        if not reports():  # another rank holds the same statistics (model parallelism): count them once
            stats = {}
        reduced = _reduce_summed({name: stats.get(name) for name in sorted(self.summed)})
        for name in self.gathered:
            reduced[name] = _gather(stats.get(name, torch.zeros(0, dtype=torch.float64)))
        return reduced

    def get_metric(self, reset: bool = False) -> float | dict[str, float]:
        value = self.compute(self.reduced_state())
        if reset:
            self.reset()
        return value

    def reset(self) -> None:
        self._stats = {}
        self._pieces = {}
        self._deferred = {}

    def state(self) -> dict[str, torch.Tensor]:
        """This worker's statistics, on the CPU; gathered ones as one concatenated tensor each."""
        for message, violations in self._deferred.items():
            if int(violations):
                raise ValueError(f"{message}; {int(violations)} were not")
        state = {name: value.detach().cpu().clone() for name, value in self._stats.items()}
        for name, pieces in self._pieces.items():
            state[name] = torch.cat([piece.cpu() for piece in pieces]) if pieces else torch.zeros(0, dtype=torch.float64)
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        self.reset()
        for name, value in state.items():
            value = torch.as_tensor(value)
            if name in self.gathered:
                self._pieces[name] = [value.reshape(-1).to(torch.float64)]
            else:
                self._stats[name] = value.to(torch.float64)

    # ------------------------------------------------------------------------------- helpers
    def label_index(self, label: int | str, option: str) -> int:
        """A label given by index or by name (names need :meth:`set_label_names`)."""
        if isinstance(label, int):
            return label
        if self.label_names is None:
            raise ValueError(f"{type(self).__name__}: {option} {label!r} is a name, but no label names are known")
        try:
            return self.label_names.index(label)
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}: {option} {label!r} is not a label; labels: {', '.join(self.label_names)}"
            ) from None


def _add(current: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    if current.shape == value.shape:
        return current + value
    width = max(current.numel(), value.numel())
    return _padded(current, width) + _padded(value, width)


def _padded(value: torch.Tensor, width: int) -> torch.Tensor:
    flat = value.reshape(-1)
    return torch.cat([flat, flat.new_zeros(width - flat.numel())]) if flat.numel() < width else flat


def _reduce_summed(stats: dict[str, torch.Tensor | None]) -> dict[str, torch.Tensor]:
    """Two collectives: agree on each statistic's shape (max), then sum them all in one vector."""
    from distrain.distributed.collectives import all_reduce_max, all_reduce_sum

    names = list(stats)
    if not names:
        return {}
    shapes = torch.tensor(
        [[-1, 0] if stats[n] is None else [stats[n].dim(), stats[n].numel()] for n in names], dtype=torch.int64
    ).reshape(-1, 2)
    shapes = all_reduce_max(shapes)
    widths = [int(width) for width in shapes[:, 1]]
    flat = torch.cat(
        [torch.zeros(0, dtype=torch.float64)]
        + [_padded(stats[n], w) if stats[n] is not None else torch.zeros(w, dtype=torch.float64) for n, w in zip(names, widths)]
    )
    flat = all_reduce_sum(flat)
    reduced: dict[str, torch.Tensor] = {}
    offset = 0
    for name, (dims, width) in zip(names, shapes.tolist()):
        if dims >= 0:  # some worker has it
            value = flat[offset : offset + width]
            reduced[name] = value.reshape(()) if dims == 0 else value
        offset += width
    return reduced


def _gather(value: torch.Tensor) -> torch.Tensor:
    from distrain.distributed.collectives import all_gather_tensors

    return torch.cat(all_gather_tensors(value))
