"""AllenNLP's F-measures over distrain's counts: ``FBetaMeasure`` (per-class lists), ``F1Measure`` (one positive
class) and ``SpanBasedF1Measure`` (labelled spans, keyed ``f1-measure-overall`` and ``precision-TYPE``).

The counting is distrain's :class:`~distrain.metrics.fbeta.FBeta` and :class:`~distrain.metrics.span_based_f1.SpanBasedF1`;
these classes only take AllenNLP's constructor arguments and give the result AllenNLP's keys.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from distrain.allennlp.training.metrics.statistic import Statistic, detached
from distrain.config.errors import ConfigError
from distrain.metrics.f1 import F1
from distrain.metrics.fbeta import FBeta
from distrain.metrics.span_based_f1 import SpanBasedF1


class AllenNLPCounts:
    """AllenNLP's counter attributes over distrain's summed ``true_positive``, ``predicted`` and ``gold``."""

    _true_positive_sum = Statistic("true_positive", detached, None)
    _pred_sum = Statistic("predicted", detached, None)
    _true_sum = Statistic("gold", detached, None)

    def _items_per_class(self) -> torch.Tensor | None:
        """How many items each class was judged on (every item once for one label per item)."""
        gold = self._true_sum
        return None if gold is None else gold.sum().repeat(gold.numel())

    @property
    def _total_sum(self) -> torch.Tensor | None:
        return self._items_per_class()

    @property
    def _true_negative_sum(self) -> torch.Tensor | None:
        items = self._items_per_class()
        if items is None:
            return None
        return items - self._pred_sum - self._true_sum + self._true_positive_sum

    def get_metric(self, reset: bool = False) -> Any:
        state = self.reduced_state()
        if not state:
            raise RuntimeError("You never call this metric before.")
        value = self.compute(state)
        if reset:
            self.reset()
        return value


class NoPredictionRows:
    """AllenNLP's reading of an all-zero row of scores: no class is predicted for it, though its gold label counts
    (distrain's ``fbeta`` takes the argmax of any row)."""

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        if predictions.dim() != gold_labels.dim() + 1:
            return super().__call__(predictions, gold_labels, mask)
        keep = torch.ones_like(gold_labels, dtype=torch.bool) if mask is None else mask.bool()
        empty = (predictions == 0).all(dim=-1) & keep
        super().__call__(predictions, gold_labels, keep & ~empty)
        if empty.any():
            gold = gold_labels.detach()[empty].long().reshape(-1)
            self.accumulate(gold=torch.bincount(gold, minlength=predictions.size(-1)))


def check_arguments(beta: float, average: str | None, labels: Any) -> None:
    """AllenNLP's constructor checks (distrain checks the same in a config, before building)."""
    if beta <= 0:
        raise ConfigError("`beta` should be >0 in the F-beta score.")
    if average not in (None, "micro", "macro", "weighted"):
        raise ConfigError(f"`average` has to be one of None, 'micro', 'macro', 'weighted'; not {average!r}")
    if labels is not None and len(labels) == 0:
        raise ConfigError("`labels` cannot be an empty list.")


def per_class_lists(values: dict[str, float], average: str | None) -> dict[str, Any]:
    """distrain's ``LABEL_precision``... keys as AllenNLP's three lists (one entry per class), when not averaged."""
    if average is not None:
        return values
    triples = list(values.values())
    return {"precision": triples[0::3], "recall": triples[1::3], "fscore": triples[2::3]}


class FBetaMeasure(NoPredictionRows, AllenNLPCounts, FBeta):
    """As :class:`FBeta`; without ``average`` the result is ``{"precision": [...], "recall": [...], "fscore": [...]}``,
    one entry per class in class order (or in ``labels``' order)."""

    def __init__(self, beta: float = 1.0, average: str | None = None, labels: list[int] | None = None) -> None:
        check_arguments(beta, average, labels)
        super().__init__(beta, average, labels)

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, Any]:
        return per_class_lists(super().compute(stats), self.average)


class F1Measure(NoPredictionRows, F1):
    """One positive class's precision, recall and F1, with AllenNLP's four counters of it."""

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        if predictions.dim() == gold_labels.dim() + 1 and (gold_labels >= predictions.size(-1)).any():
            raise ConfigError(f"A gold label passed to F1Measure contains an id >= {predictions.size(-1)}, the "
                              "number of classes.")
        super().__call__(predictions, gold_labels, mask)

    def _counts(self) -> tuple[float, float, float, float]:
        """This worker's true positives, false positives, false negatives and true negatives of the class."""
        index = self.label_indices()[0]
        read = lambda name: self._stats.get(name)  # noqa: E731
        stats = [read(name) for name in ("true_positive", "predicted", "gold")]
        if any(value is None for value in stats):
            return 0.0, 0.0, 0.0, 0.0
        at = lambda value: float(value[index]) if index < value.numel() else 0.0  # noqa: E731
        hits, predicted, gold = (at(value) for value in stats)
        total = float(stats[2].sum())
        return hits, predicted - hits, gold - hits, total - predicted - gold + hits

    _true_positives = property(lambda self: self._counts()[0])
    _false_positives = property(lambda self: self._counts()[1])
    _false_negatives = property(lambda self: self._counts()[2])
    _true_negatives = property(lambda self: self._counts()[3])


class SpanBasedF1Measure(SpanBasedF1):
    """Span F1 with the tag names read from ``vocabulary``'s ``tag_namespace``."""

    def __init__(self, vocabulary: Any, tag_namespace: str = "tags", ignore_classes: Sequence[str] | None = None,
                 label_encoding: str | None = "BIO", tags_to_spans_function: Callable | None = None) -> None:
        names = vocabulary.get_index_to_token_vocabulary(tag_namespace)
        super().__init__([names[index] for index in range(len(names))], label_encoding, tags_to_spans_function,
                         ignore_classes)


__all__ = ["F1Measure", "FBetaMeasure", "SpanBasedF1Measure"]
