"""Seq2vec encoders: a (batch, length, dim) sequence and its mask in, one vector per item out."""

from __future__ import annotations

import torch

from distrain.modules.sizes import Widths
from distrain.registry import Registrable


class Seq2VecEncoder(torch.nn.Module, Widths, Registrable):
    """``input_dim`` is supplied by the model (its embedding size); ``output_dim`` says what comes out.

    AllenNLP's encoders also take their input width from the config (``input_size_key`` names that
    argument); a model that builds the encoder itself passes ``input_dim`` and the two are checked to
    agree when the config is validated (:mod:`distrain.modules.sizes`).
    """

    default_implementation = "boe"
    runtime_args = ("input_dim",)

    def __init__(self, stateful: bool = False) -> None:
        """``stateful`` is AllenNLP's flag of its recurrent encoders, kept as ``self.stateful`` so an encoder written
        against AllenNLP's base class (``super().__init__(stateful=False)``) builds; distrain's encoders carry no
        state from one batch to the next."""
        super().__init__()
        self.stateful = stateful

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
