"""AllenNLP's ``bag_of_word_counts`` token embedder: a text as the count of each vocabulary entry in it,
``(batch, vocabulary size)``, optionally projected. Padding (id 0) is never counted; with ``ignore_oov`` neither is
the OOV entry, which the namespace must then have."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.errors import ConfigError
from distrain.config.lazy import Lazy
from distrain.modules.token_embedder import TokenEmbedder

OOV_INDEX = 1


@TokenEmbedder.register("bag_of_word_counts")
class BagOfWordCountsTokenEmbedder(TokenEmbedder):
    """Token counts over ``vocab_namespace`` (the model passes its vocabulary), projected to ``projection_dim``."""

    runtime_args = ("vocab",)

    def __init__(self, vocab: Any = None, vocab_namespace: str = "tokens", projection_dim: PositiveInt | None = None,
                 ignore_oov: bool = False) -> None:
        super().__init__()
        if vocab is None:
            raise ValueError("bag_of_word_counts needs the vocabulary (its size is the embedding's width)")
        self.vocab_size = vocab.get_vocab_size(vocab_namespace)
        if ignore_oov and not vocab.is_padded_namespace(vocab_namespace):
            raise ConfigError(f"bag_of_word_counts: ignore_oov needs an OOV entry, which namespace {vocab_namespace!r} "
                              "(not padded) lacks")
        self.ignore_oov = ignore_oov
        self.projection = torch.nn.Linear(self.vocab_size, projection_dim) if projection_dim else None
        self.output_dim = projection_dim or self.vocab_size

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        return recipe.argument("projection_dim")

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        counted = tokens != 0
        if self.ignore_oov:
            counted = counted & (tokens != OOV_INDEX)
        ids = tokens.clamp(0, self.vocab_size - 1).reshape(-1, tokens.shape[-1])
        weights = counted.reshape(-1, tokens.shape[-1]).float()
        counts = torch.zeros(ids.shape[0], self.vocab_size, device=tokens.device).scatter_add_(1, ids, weights)
        counts = counts.reshape(*tokens.shape[:-1], self.vocab_size)
        return self.projection(counts) if self.projection is not None else counts
