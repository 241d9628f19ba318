"""AllenNLP's F-measures that read its counters: ``FBetaVerboseMeasure`` (every class and every average at once)
and ``FBetaMultiLabelMeasure`` / ``F1MultiLabelMeasure`` (distrain's ``fbeta_multi_label``), with AllenNLP's
``_true_positive_sum``, ``_pred_sum``, ``_true_sum``, ``_true_negative_sum`` and ``_total_sum`` read from this
worker's summed statistics (``None`` before the first call, where ``get_metric`` raises ``RuntimeError``)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.allennlp.training.metrics.fbeta import AllenNLPCounts, NoPredictionRows, check_arguments, per_class_lists
from distrain.allennlp.training.metrics.statistic import Statistic, detached
from distrain.metrics.fbeta import COUNTS, FBeta, fbeta_score, ratio
from distrain.metrics.fbeta_multi_label import FBetaMultiLabel

__all__ = ["F1MultiLabelMeasure", "FBetaMultiLabelMeasure", "FBetaVerboseMeasure"]


class FBetaVerboseMeasure(NoPredictionRows, AllenNLPCounts, FBeta):
    """Each class's ``<label>-precision``, ``-recall`` and ``-fscore`` (``index_to_label`` names them) and the
    ``micro-``, ``macro-`` and ``weighted-`` averages, in one result."""

    def __init__(self, beta: float = 1.0, labels: list[int] | None = None,
                 index_to_label: dict[int, str] | None = None) -> None:
        check_arguments(beta, None, labels)
        super().__init__(beta, None, labels)
        self.index_to_label = index_to_label

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        counts = [stats.get(name, torch.zeros(0, dtype=torch.float64)).reshape(-1) for name in COUNTS]
        width = max(count.numel() for count in counts)
        counts = [torch.cat([count, count.new_zeros(width - count.numel())]) for count in counts]
        if self.labels is not None:
            counts = [count[[self.label_index(label, "label") for label in self.labels]] for count in counts]
        true_positive, predicted, gold = counts
        precision, recall = ratio(true_positive, predicted), ratio(true_positive, gold)
        fscore = fbeta_score(true_positive, predicted, gold, self.beta)
        result: dict[str, float] = {}
        for position in range(len(true_positive)):
            name = self.index_to_label[position] if self.index_to_label else str(position)
            result[f"{name}-precision"] = float(precision[position])
            result[f"{name}-recall"] = float(recall[position])
            result[f"{name}-fscore"] = float(fscore[position])
        for kind, values in (("precision", precision), ("recall", recall), ("fscore", fscore)):
            result[f"macro-{kind}"] = float(values.mean()) if values.numel() else 0.0
            result[f"weighted-{kind}"] = float(ratio((values * gold).sum(), gold.sum()))
        total = [count.sum() for count in (true_positive, predicted, gold)]
        result["micro-precision"] = float(ratio(total[0], total[1]))
        result["micro-recall"] = float(ratio(total[0], total[2]))
        result["micro-fscore"] = float(fbeta_score(total[0], total[1], total[2], self.beta))
        return result


class FBetaMultiLabelMeasure(AllenNLPCounts, FBetaMultiLabel):
    """Without ``average`` the result is ``{"precision": [...], "recall": [...], "fscore": [...]}``, one entry per
    class."""

    def __init__(self, beta: float = 1.0, average: str | None = None, labels: list[int] | None = None,
                 threshold: float = 0.5) -> None:
        check_arguments(beta, average, labels)
        super().__init__(beta, average, labels, threshold)

    _items = Statistic("total", detached, None)

    @property
    def _threshold(self) -> float:
        """AllenNLP's name for :attr:`threshold`."""
        return self.threshold

    def _items_per_class(self) -> torch.Tensor | None:
        return self._items

    @property
    def _total_sum(self) -> torch.Tensor | None:
        total = self._items  # AllenNLP added every masked element to every class
        return None if total is None else total.sum().repeat(total.numel())

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, Any]:
        return per_class_lists(super().compute(stats), self.average)


class F1MultiLabelMeasure(FBetaMultiLabelMeasure):
    def __init__(self, average: str | None = None, labels: list[int] | None = None, threshold: float = 0.5) -> None:
        super().__init__(1.0, average, labels, threshold)
