"""Metrics whose AllenNLP form refuses bad input with a ``ConfigurationError`` where distrain's raises
``ValueError`` (or checks the config before building): AllenNLP's code and tests catch that class."""

from __future__ import annotations

from typing import Any

import torch

from distrain.allennlp.training.metrics.statistic import Statistic
from distrain.errors import ConfigError
from distrain.metrics import auc, categorical_accuracy

__all__ = ["Auc", "CategoricalAccuracy", "Counts", "as_configuration_errors"]


class Counts:
    """AllenNLP's ``correct_count`` and ``total_count``: this worker's summed ``correct`` and ``total``."""

    correct_count = Statistic("correct")
    total_count = Statistic("total")


def as_configuration_errors(update: Any, *arguments: Any) -> None:
    """``update(*arguments)``, its ``ValueError`` raised as a ``ConfigurationError`` of the same message."""
    try:
        update(*arguments)
    except ValueError as problem:
        raise ConfigError(str(problem)) from None


class CategoricalAccuracy(Counts, categorical_accuracy.CategoricalAccuracy):
    def __init__(self, top_k: int = 1, tie_break: bool = False) -> None:
        if top_k <= 0:
            raise ConfigError(f"top_k passed to Categorical Accuracy must be > 0, not {top_k}")
        problems = self.argument_problems({"top_k": top_k, "tie_break": tie_break})
        if problems:
            raise ConfigError(problems)
        super().__init__(top_k, tie_break)

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        as_configuration_errors(super().__call__, predictions, gold_labels, mask)


class Auc(auc.Auc):
    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        kept = gold_labels if mask is None else gold_labels[mask.bool()]
        if torch.unique(kept).numel() > 2:
            raise ConfigError("AUC can be used for binary tasks only: the gold labels hold more than two values")
        as_configuration_errors(super().__call__, predictions, gold_labels, mask)
