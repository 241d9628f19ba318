"""AllenNLP's counter attributes (``correct_count``, ``_entropy``, ``_true_positive_sum``…), which its code and
tests read, as views of distrain's summed statistics: a metric keeps one set of numbers, under its own keys."""

from __future__ import annotations

from typing import Any, Callable


class Statistic:
    """A read-only attribute that reads ``metric._stats[key]`` (this worker's sum), turned by ``read`` into what
    AllenNLP's attribute held (a float unless told), or ``missing`` before any update."""

    def __init__(self, key: str, read: Callable[[Any], Any] = float, missing: Any = 0.0) -> None:
        self.key, self.read, self.missing = key, read, missing

    def __get__(self, metric: Any, owner: type | None = None) -> Any:
        if metric is None:
            return self
        value = metric._stats.get(self.key)
        return self.missing if value is None else self.read(value)


def detached(value: Any) -> Any:
    """A tensor statistic as AllenNLP kept it: a CPU copy the caller may change."""
    return value.detach().cpu().clone()
