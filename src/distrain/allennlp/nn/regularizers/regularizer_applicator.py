"""AllenNLP's ``RegularizerApplicator``: built from ``(regex, regularizer)`` pairs, called on a module for its
total penalty (distrain's applicator is the ``model.regularizer`` block)."""

from __future__ import annotations

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.optim import regularizers as _regularizers


class RegularizerApplicator(FromParams, _regularizers.RegularizerApplicator):
    """AllenNLP's ``from_params`` (``regexes`` of ``[regex, regularizer]`` pairs) and call on a module."""

    @property
    def _regularizers(self) -> list:
        """AllenNLP's name for the ``(regex, regularizer)`` pairs."""
        return list(self.regexes or [])

    def __call__(self, module: torch.nn.Module) -> torch.Tensor:
        return self.penalty(module.named_parameters())


__all__ = ["RegularizerApplicator"]
