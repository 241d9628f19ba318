"""Fraction of sequences whose every unmasked position is predicted right (exact match)."""

from __future__ import annotations

import torch

from distrain.metrics.classes import predicted_classes
from distrain.metrics.metric import Metric


@Metric.register("sequence_accuracy")
class SequenceAccuracy(Metric):
    """Fraction of sequences predicted right in every unmasked position.

    ``predictions``: tag scores ``[B, T, C]`` or tag ids ``[B, T]``; ``gold_labels``: ``[B, T]``;
    ``mask``: ``[B, T]``, padding positions false. A sequence with no unmasked position counts as right."""

    summed = ("correct", "total")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        gold_labels = gold_labels.detach()
        if gold_labels.dim() != 2:
            raise ValueError(f"sequence_accuracy needs gold labels [batch, length]; got {tuple(gold_labels.shape)}")
        predicted = predicted_classes(predictions, gold_labels)
        wrong = predicted.ne(gold_labels)
        if mask is not None:
            wrong = wrong & mask.detach().bool()
        correct = ~wrong.any(-1)
        self.accumulate(correct=correct.sum(), total=gold_labels.shape[0])

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        total = float(stats.get("total", 0.0))
        return float(stats.get("correct", 0.0)) / total if total > 0 else 0.0
