"""Precision, recall and F-beta per class, or averaged (micro, macro, weighted) like scikit-learn."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping, Sequence

import torch
from annotated_types import MinLen

from distrain.config.constraints import NonNegativeInt, PositiveFloat
from distrain.config.errors import Problem
from distrain.metrics.classes import check_gold_range, flat_weights, predicted_classes
from distrain.metrics.metric import Metric


#: the per-class counts F-beta is computed from (a subclass may sum more statistics)
COUNTS = ("true_positive", "predicted", "gold")


def fbeta_score(true_positive, predicted, gold, beta: float):
    """F-beta from counts (scalars or vectors); 0 where nothing was predicted or expected."""
    beta2 = beta * beta
    denominator = (1 + beta2) * true_positive + beta2 * (gold - true_positive) + (predicted - true_positive)
    return torch.where(denominator > 0, (1 + beta2) * true_positive / denominator.clamp(min=1e-300), 0.0)


def ratio(numerator: torch.Tensor, denominator: torch.Tensor) -> torch.Tensor:
    return torch.where(denominator > 0, numerator / denominator.clamp(min=1e-300), 0.0)


@Metric.register("fbeta")
class FBeta(Metric):
    """Precision, recall and F-beta per class, or micro/macro/weighted averages (as scikit-learn).

    ``predictions``: scores ``[..., C]`` or class ids ``[...]``; ``gold_labels``: ``[...]``.

    Keeps true-positive, predicted and gold counts per class (summed over workers). ``labels``
    (indices or names from the model's label vocabulary) picks and orders the classes reported and
    averaged; by default all classes. Without ``average`` the result has ``LABEL_precision``,
    ``LABEL_recall`` and ``LABEL_fscore`` per label; with it, ``precision``, ``recall``, ``fscore``.
    A ratio with nothing to divide by is 0, as scikit-learn's ``zero_division=0``.
    """

    summed = ("true_positive", "predicted", "gold")

    def __init__(
        self,
        beta: PositiveFloat = 1.0,
        average: Literal["micro", "macro", "weighted"] | None = None,
        labels: Annotated[list[NonNegativeInt | str], MinLen(1)] | None = None,
    ) -> None:
        super().__init__()
        self.beta = beta
        self.average = average
        self.labels = labels

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        labels = arguments.get("labels") or []
        repeated = sorted({str(label) for label in labels if labels.count(label) > 1})
        return [Problem("labels", f"lists {', '.join(repeated)} more than once")] if repeated else []

    def set_label_names(self, names: Sequence[str]) -> None:
        super().set_label_names(names)
        self.label_indices()  # an unknown label name fails now, while the model is built

    def label_indices(self, num_classes: int = 0) -> list[int]:
        if self.labels is not None:
            return [self.label_index(label, "label") for label in self.labels]
        return list(range(max(num_classes, len(self.label_names or ()))))

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        gold_labels = gold_labels.detach()
        predicted = predicted_classes(predictions, gold_labels).reshape(-1)
        gold = gold_labels.reshape(-1).long()
        weights = flat_weights(gold_labels, mask)
        num_classes = predictions.size(-1) if predictions.dim() == gold_labels.dim() + 1 else 0
        num_classes = max(num_classes, len(self.label_names or ()))
        keep = weights > 0
        if keep.any():
            num_classes = max(num_classes, int(gold[keep].max()) + 1, int(predicted[keep].max()) + 1)
        check_gold_range(self, gold, weights, num_classes, "fbeta")
        predicted, gold, weights = predicted[keep], gold[keep], weights[keep]
        hits = predicted.eq(gold)
        self.accumulate(
            true_positive=torch.bincount(gold[hits], weights[hits], minlength=num_classes),
            predicted=torch.bincount(predicted, weights, minlength=num_classes),
            gold=torch.bincount(gold, weights, minlength=num_classes),
        )

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        counts = [stats.get(name, torch.zeros(0, dtype=torch.float64)).reshape(-1) for name in COUNTS]
        indices = self.label_indices(max(count.numel() for count in counts))
        width = max([count.numel() for count in counts] + [i + 1 for i in indices])
        counts = [torch.cat([c, c.new_zeros(width - c.numel())])[indices] for c in counts]
        true_positive, predicted, gold = counts
        if self.average == "micro":
            true_positive, predicted, gold = true_positive.sum(), predicted.sum(), gold.sum()
        precision = ratio(true_positive, predicted)
        recall = ratio(true_positive, gold)
        fscore = fbeta_score(true_positive, predicted, gold, self.beta)
        if self.average is None:
            result = {}
            for position, index in enumerate(indices):
                name = self.label_names[index] if self.label_names and index < len(self.label_names) else str(index)
                result[f"{name}_precision"] = float(precision[position])
                result[f"{name}_recall"] = float(recall[position])
                result[f"{name}_fscore"] = float(fscore[position])
            return result
        if self.average == "macro":
            precision, recall, fscore = (v.mean() if v.numel() else v.sum() for v in (precision, recall, fscore))
        elif self.average == "weighted":
            support = gold.sum()
            precision, recall, fscore = (ratio((v * gold).sum(), support) for v in (precision, recall, fscore))
        return {"precision": float(precision), "recall": float(recall), "fscore": float(fscore)}
