"""Fraction of items whose gold label is among the top-k predictions."""

from __future__ import annotations

import torch

from distrain.metrics.metric import Metric


@Metric.register("categorical_accuracy")
class CategoricalAccuracy(Metric):
    def __init__(self, top_k: int = 1, tie_break: bool = False) -> None:
        super().__init__()
        if tie_break and top_k != 1:
            raise ValueError("tie_break only applies to top_k = 1")
        self.top_k = top_k
        self.tie_break = tie_break

    def stat_names(self) -> list[str]:
        return ["correct", "total"]

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        num_classes = predictions.size(-1)
        predictions = predictions.reshape(-1, num_classes)
        gold = gold_labels.reshape(-1).long()
        if self.tie_break:
            # ties share the credit: 1 / (number of classes tied for the top score)
            top = predictions.max(-1, keepdim=True).values
            tied = predictions.eq(top)
            correct = tied.gather(1, gold.unsqueeze(1)).squeeze(1).float() / tied.sum(-1).float()
        elif self.top_k == 1:
            correct = predictions.argmax(-1).eq(gold).float()
        else:
            top_k = predictions.topk(min(self.top_k, num_classes), -1).indices
            correct = top_k.eq(gold.unsqueeze(-1)).any(-1).float()
        if mask is not None:
            weights = mask.reshape(-1).float()
            self.accumulate(correct=(correct * weights).sum(), total=weights.sum())
        else:
            self.accumulate(correct=correct.sum(), total=correct.numel())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        total = float(stats.get("total", 0.0))
        return float(stats.get("correct", 0.0)) / total if total > 0 else 0.0
