"""Precision, recall and F-beta of multi-label predictions: each class a yes/no question answered by its score.

A class is predicted where its score reaches ``threshold`` (an instance whose scores are all 0 predicts nothing,
as AllenNLP's ``fbeta_multi_label``); gold labels are multi-hot, the same shape as the scores. The counts are
summed over workers and averaged (``micro``, ``macro``, ``weighted``) as :class:`~distrain.metrics.fbeta.FBeta`
averages its classes.
"""

from __future__ import annotations

from typing import Annotated, Literal

import torch
from annotated_types import Ge, Le, MinLen

from distrain.config.constraints import NonNegativeInt, PositiveFloat
from distrain.metrics.fbeta import FBeta
from distrain.metrics.metric import Metric


@Metric.register("fbeta_multi_label")
class FBetaMultiLabel(FBeta):
    """``predictions``: scores ``[..., C]``; ``gold_labels``: 0/1 ``[..., C]``; ``mask``: ``[...]`` or ``[..., C]``."""

    summed = ("true_positive", "predicted", "gold", "total")

    def __init__(self, beta: PositiveFloat = 1.0, average: Literal["micro", "macro", "weighted"] | None = None,
                 labels: Annotated[list[NonNegativeInt | str], MinLen(1)] | None = None,
                 threshold: Annotated[float, Ge(0.0), Le(1.0)] = 0.5) -> None:
        super().__init__(beta, average, labels)
        self.threshold = threshold

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold = predictions.detach(), gold_labels.detach().bool()
        if predictions.shape != gold.shape:
            raise ValueError(f"fbeta_multi_label: predictions {tuple(predictions.shape)} and gold labels "
                             f"{tuple(gold.shape)} differ in shape")
        classes = predictions.size(-1)
        if mask is None:
            mask = torch.ones_like(gold)
        mask = mask.detach().bool()
        mask = (mask.unsqueeze(-1) if mask.dim() < gold.dim() else mask).expand_as(gold)
        classified = (predictions.sum(dim=-1) != 0).unsqueeze(-1)
        predicted = (predictions >= self.threshold) & mask & classified
        rows = lambda values: values.reshape(-1, classes).sum(dim=0)  # noqa: E731
        self.accumulate(true_positive=rows(predicted & gold), predicted=rows(predicted), gold=rows(gold & mask),
                        total=rows(mask))


@Metric.register("f1_multi_label")
class F1MultiLabel(FBetaMultiLabel):
    """:class:`FBetaMultiLabel` with ``beta`` 1."""

    def __init__(self, average: Literal["micro", "macro", "weighted"] | None = None,
                 labels: Annotated[list[NonNegativeInt | str], MinLen(1)] | None = None,
                 threshold: Annotated[float, Ge(0.0), Le(1.0)] = 0.5) -> None:
        super().__init__(1.0, average, labels, threshold)
