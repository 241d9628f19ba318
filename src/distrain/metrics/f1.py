"""Precision, recall and F1 of one positive class (binary classification)."""

from __future__ import annotations

import torch

from distrain.config.constraints import NonNegativeInt
from distrain.metrics.fbeta import FBeta
from distrain.metrics.metric import Metric


@Metric.register("f1")
class F1(FBeta):
    """Precision, recall and F1 of one positive class.

    ``positive_label``: the class whose precision/recall/F1 is reported, by index or by name.
    Inputs as :class:`FBeta`; the result has ``precision``, ``recall`` and ``f1``."""

    def __init__(self, positive_label: NonNegativeInt | str = 1) -> None:
        super().__init__(beta=1.0, average=None, labels=[positive_label])

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        per_label = super().compute(stats)
        precision, recall, fscore = per_label.values()
        return {"precision": precision, "recall": recall, "f1": fscore}
