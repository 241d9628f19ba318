"""Metrics whose AllenNLP form differs from distrain's only in the result's shape or in one input.

``MeanAbsoluteError`` reports ``{"mae": ...}``; ``SequenceAccuracy`` reports ``{"accuracy": ...}`` and takes
AllenNLP's ``[batch, k, length]`` predictions (a sequence is right when any of its ``k`` candidates matches gold
wherever the mask is on): the candidate that matches, else the first, is what distrain's metric counts.
"""

from __future__ import annotations

import torch

from distrain.allennlp.training.metrics.checked import Counts
from distrain.allennlp.training.metrics.statistic import Statistic
from distrain.errors import ConfigError
from distrain.metrics import entropy, mean_absolute_error, sequence_accuracy, unigram_recall


class MeanAbsoluteError(mean_absolute_error.MeanAbsoluteError):
    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        return {"mae": super().compute(stats)}


class SequenceAccuracy(Counts, sequence_accuracy.SequenceAccuracy):
    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        if gold_labels.dim() != predictions.dim() - 1:
            raise ConfigError(f"SequenceAccuracy: predictions [batch, k, length] for gold [batch, length]; got "
                              f"{tuple(predictions.shape)} and {tuple(gold_labels.shape)}")
        if mask is not None and mask.shape != gold_labels.shape:
            raise ConfigError(f"SequenceAccuracy: the mask {tuple(mask.shape)} is not gold's {tuple(gold_labels.shape)}")
        keep = torch.ones_like(gold_labels, dtype=torch.bool) if mask is None else mask.bool()
        matches = (predictions.eq(gold_labels.unsqueeze(1)) | ~keep.unsqueeze(1)).all(-1)  # [batch, k]
        chosen = matches.long().argmax(1)  # the first matching candidate, else the first
        rows = torch.arange(predictions.shape[0], device=predictions.device)
        super().__call__(predictions[rows, chosen], gold_labels, mask)

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        return {"accuracy": super().compute(stats)}


__all__ = ["MeanAbsoluteError", "SequenceAccuracy"]


class Entropy(entropy.Entropy):
    """AllenNLP's ``_entropy`` (the summed per-batch mean entropies) and ``_count`` (the batches) are this worker's
    statistics."""

    _entropy = Statistic("entropy")
    _count = Statistic("batches")


class UnigramRecall(unigram_recall.UnigramRecall):
    """AllenNLP's ``correct_count`` (the summed per-sequence recalls) and ``total_count`` (the sequences) are this
    worker's statistics."""

    correct_count = Statistic("recalled")
    total_count = Statistic("sequences")
