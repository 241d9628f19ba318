"""Area under the ROC curve, exact: computed from every score, gathered from every worker."""

from __future__ import annotations

from typing import Sequence

import torch

from distrain.config.constraints import NonNegativeInt
from distrain.metrics.classes import flat_weights
from distrain.metrics.metric import Metric
from distrain.metrics.ranking import average_ranks


@Metric.register("auc")
class Auc(Metric):
    """Exact ROC AUC of one positive class; scores are gathered from every worker.

    ``predictions``: a score per item ``[B]``, or class logits ``[B, C]`` (the positive class's
    log-softmax is its score); ``gold_labels``: class ids ``[B]``, positive where they equal
    ``positive_label`` (an index, or a name from the model's label vocabulary).

    The value is the Mann-Whitney statistic with tied scores sharing their ranks, which equals
    scikit-learn's ``roc_auc_score``. With only one class seen the AUC is undefined; it reads 0.5.
    """

    gathered = ("score", "positive")

    def __init__(self, positive_label: NonNegativeInt | str = 1) -> None:
        super().__init__()
        self.positive_label = positive_label

    def set_label_names(self, names: Sequence[str]) -> None:
        super().set_label_names(names)
        self.label_index(self.positive_label, "positive_label")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        positive = self.label_index(self.positive_label, "positive_label")
        if predictions.dim() == gold_labels.dim() + 1:
            scores = torch.log_softmax(predictions.double(), dim=-1)[..., positive]
        elif predictions.shape == gold_labels.shape:
            scores = predictions.double()
        else:
            raise ValueError(f"auc: predictions {tuple(predictions.shape)} do not fit gold labels {tuple(gold_labels.shape)}")
        keep = flat_weights(gold_labels, mask) > 0
        self.collect(score=scores.reshape(-1)[keep], positive=gold_labels.reshape(-1)[keep].eq(positive))

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        scores = stats.get("score", torch.zeros(0, dtype=torch.float64))
        positive = stats.get("positive", torch.zeros(0, dtype=torch.float64)).bool()
        num_positive = int(positive.sum())
        num_negative = positive.numel() - num_positive
        if num_positive == 0 or num_negative == 0:
            return 0.5
        rank_sum = average_ranks(scores)[positive].sum()
        return float((rank_sum - num_positive * (num_positive + 1) / 2) / (num_positive * num_negative))
