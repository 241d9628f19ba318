"""AllenNLP's ``unigram_recall``: of each sequence's gold tokens, the share that appear in any of its ``k``
predicted sequences, averaged over sequences (summed over workers)."""

from __future__ import annotations

import sys

import torch

from distrain.metrics.metric import Metric


@Metric.register("unigram_recall")
class UnigramRecall(Metric):
    """``predictions`` ``(batch, k, length)``, ``gold_labels`` ``(batch, length)``; gold ids 0 (padding),
    ``end_index`` and masked positions are not counted. Reads ``{"unigram_recall": ...}``."""

    summed = ("recalled", "sequences")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None,
                 end_index: int = sys.maxsize) -> None:
        if gold_labels.dim() != predictions.dim() - 1:
            raise ValueError(f"unigram_recall: predictions (batch, k, length) for gold (batch, length); got "
                             f"{tuple(predictions.shape)} and {tuple(gold_labels.shape)}")
        if mask is not None and mask.shape != gold_labels.shape:
            raise ValueError(f"unigram_recall: the mask {tuple(mask.shape)} is not gold's {tuple(gold_labels.shape)}")
        gold = gold_labels.detach() * (mask.detach().long() if mask is not None else 1)
        recalled = 0.0
        for beams, row in zip(predictions.detach().tolist(), gold.tolist()):
            wanted = [token for token in row if token not in (0, end_index)]
            found = {token for beam in beams for token in beam}
            recalled += sum(token in found for token in wanted) / len(wanted) if wanted else 0.0
        self.accumulate(recalled=torch.tensor(recalled, dtype=torch.float64), sequences=float(len(gold)))

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        sequences = float(stats.get("sequences", 0.0))
        return {"unigram_recall": float(stats.get("recalled", 0.0)) / sequences if sequences else 0.0}
