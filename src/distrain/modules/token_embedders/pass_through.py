"""AllenNLP's ``pass_through`` token embedder: an indexer's tensor already holds the vectors (precomputed
features), so it goes on as it is."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.token_embedder import TokenEmbedder


@TokenEmbedder.register("pass_through")
class PassThroughTokenEmbedder(TokenEmbedder):
    """Returns its input, ``hidden_dim`` wide."""

    def __init__(self, hidden_dim: PositiveInt) -> None:
        super().__init__()
        self.output_dim = hidden_dim

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        return recipe.argument("hidden_dim")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return tokens
