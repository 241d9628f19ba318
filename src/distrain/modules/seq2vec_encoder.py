"""Seq2vec encoders: a (batch, length, dim) sequence and its mask in, one vector per item out."""

from __future__ import annotations

import torch

from distrain.modules.encoder_base import EncoderBase
from distrain.registry import Registrable


class Seq2VecEncoder(EncoderBase, Registrable):
    """``input_dim`` is supplied by the model (its embedding size); ``output_dim`` says what comes out.

    AllenNLP's encoders also take their input width from the config (``input_size_key`` names that
    argument); a model that builds the encoder itself passes ``input_dim`` and the two are checked to
    agree when the config is validated (:mod:`distrain.modules.sizes`).
    """

    default_implementation = "boe"
    runtime_args = ("input_dim",)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
