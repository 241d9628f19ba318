"""Fraction of items whose gold label is among the top-k predictions."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.errors import Problem
from distrain.metrics.classes import check_gold_range, flat_weights
from distrain.metrics.metric import Metric


@Metric.register("categorical_accuracy")
class CategoricalAccuracy(Metric):
    """Fraction of items whose gold class is among the top-k scores.

    ``predictions``: class scores ``[..., C]``; ``gold_labels``: ids ``[...]``; ``mask``: ``[...]``.

    With ``tie_break`` an item whose top score is shared by ``n`` classes, the gold among them,
    counts ``1/n`` correct instead of depending on which tied class ``argmax`` happens to return.
    """

    summed = ("correct", "total")

    def __init__(self, top_k: PositiveInt = 1, tie_break: bool = False) -> None:
        super().__init__()
        self.top_k = top_k
        self.tie_break = tie_break

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        if arguments["tie_break"] and arguments["top_k"] != 1:
            return [Problem("tie_break", f"only applies to top_k 1, got top_k {arguments['top_k']}")]
        return []

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        if predictions.dim() != gold_labels.dim() + 1:
            raise ValueError(
                f"categorical_accuracy needs class scores [..., C] for gold labels [...]; got "
                f"{tuple(predictions.shape)} and {tuple(gold_labels.shape)}"
            )
        num_classes = predictions.size(-1)
        scores = predictions.reshape(-1, num_classes)
        gold = gold_labels.reshape(-1).long()
        weights = flat_weights(gold_labels, mask)
        check_gold_range(self, gold, weights, num_classes, "categorical_accuracy")
        gold = gold.clamp(0, num_classes - 1)  # masked padding ids must still index
        if self.tie_break:
            tied = scores.eq(scores.max(-1, keepdim=True).values)
            correct = tied.gather(1, gold.unsqueeze(1)).squeeze(1).double() / tied.sum(-1).double()
        elif self.top_k == 1:
            correct = scores.argmax(-1).eq(gold).double()
        else:
            # a stable sort, as AllenNLP's: tied scores count in class order (topk orders ties otherwise)
            top = scores.sort(dim=-1, descending=True, stable=True).indices[:, : min(self.top_k, num_classes)]
            correct = top.eq(gold.unsqueeze(-1)).any(-1).double()
        self.accumulate(correct=(correct * weights).sum(), total=weights.sum())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        total = float(stats.get("total", 0.0))
        return float(stats.get("correct", 0.0)) / total if total > 0 else 0.0
