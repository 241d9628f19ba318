"""TokenEmbedder base: one indexer's tensors in, a vector per token out (AllenNLP's contract).

A text-field embedder holds one token embedder per indexer, under the indexer's name, and
concatenates what they give; ``configured_output_dim`` lets the config's sizes be checked before
anything is built.
"""

from __future__ import annotations

import torch

from distrain.config.lazy import Lazy
from distrain.registry import Registrable


class TokenEmbedder(torch.nn.Module, Registrable):
    default_implementation = "embedding"
    output_dim: int

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        """The width the configured embedder gives (None: unknown until built)."""
        return None

    def get_output_dim(self) -> int:
        return self.output_dim
