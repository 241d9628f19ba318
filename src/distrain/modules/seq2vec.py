"""Seq2vec encoders: a (batch, length, dim) sequence and its mask in, one vector per item out."""

from __future__ import annotations

from typing import ClassVar

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.sizes import resolve_input_dim
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


@Seq2VecEncoder.register("boe")
class BagOfEmbeddings(Seq2VecEncoder):
    """Sum (or mean, with ``averaged``) of the unmasked embeddings, in two forms.

    distrain's short form, ``{"type": "boe"}``, takes its width from the model and averages unless told
    otherwise. AllenNLP's ``boe`` is another name of its ``bag_of_embeddings``: it states ``embedding_dim``
    and sums unless ``averaged``. A config that states ``embedding_dim`` is AllenNLP's form (distrain's
    ``boe`` refused the key before), so ``averaged`` then defaults to AllenNLP's sum: the moved config
    trains the same model.
    """

    input_size_key = "embedding_dim"

    def __init__(self, embedding_dim: PositiveInt | None = None, averaged: bool | None = None,
                 input_dim: int | None = None) -> None:
        super().__init__()
        self.averaged = embedding_dim is None if averaged is None else averaged
        self.input_dim = self.output_dim = resolve_input_dim(embedding_dim, input_dim, "embedding_dim")

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim if input_dim is not None else encoder.argument("embedding_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        weights = mask.unsqueeze(-1).to(inputs.dtype)
        summed = (inputs * weights).sum(1)
        if not self.averaged:
            return summed
        return summed / weights.sum(1).clamp(min=1.0)
