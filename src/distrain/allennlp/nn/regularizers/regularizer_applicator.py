"""AllenNLP's ``RegularizerApplicator``: built from ``(regex, regularizer)`` pairs, called on a module for its
total penalty (distrain's applicator is the ``model.regularizer`` block)."""

from __future__ import annotations

import torch

from distrain.optim import regularizers as _regularizers


class RegularizerApplicator(_regularizers.RegularizerApplicator):
    def __call__(self, module: torch.nn.Module) -> torch.Tensor:
        return self.penalty(module.named_parameters())


__all__ = ["RegularizerApplicator"]
