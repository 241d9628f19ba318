"""Seq2vec encoders: a (batch, length, dim) sequence and its mask in, one vector per item out."""

from __future__ import annotations

from typing import ClassVar

import torch

from distrain.config.lazy import Lazy
from distrain.registry import Registrable


class Seq2VecEncoder(torch.nn.Module, Registrable):
    """``input_dim`` is supplied by the model (its embedding size); ``output_dim`` says what comes out.

    AllenNLP's encoders also take their input width from the config (``input_size_key`` names that
    argument); a model that builds the encoder itself passes ``input_dim`` and the two are checked to
    agree when the config is validated (:mod:`distrain.modules.sizes`).
    """

    default_implementation = "boe"
    runtime_args = ("input_dim",)
    #: the argument AllenNLP configs state the input width with (None: this encoder has none)
    input_size_key: ClassVar[str | None] = None
    output_dim: int

    @classmethod
    def input_dim_problem(cls, encoder: Lazy, input_dim: int) -> str | None:
        """Why the configured ``encoder`` (a recipe of ``cls``) cannot take ``input_dim`` (None: it can).

        ``input_dim`` comes from the model that owns the encoder, so the model's ``argument_problems``
        asks this when the config is validated.
        """
        return None

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        """The width the configured ``encoder`` outputs for ``input_dim`` (None: unknown until built)."""
        return None

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
