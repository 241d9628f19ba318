"""AllenNLP's ``character_encoding``: embed each token's characters and encode them to one vector per
token with a seq2vec encoder (a character CNN, usually)."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import input_problems, output_dim
from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.embedding import Embedding


@TokenEmbedder.register("character_encoding")
class TokenCharactersEncoder(TokenEmbedder):
    """``embedding`` is over the characters' namespace: the one its ``characters`` indexer writes
    (``token_characters`` unless that indexer names another; see :mod:`distrain.experiment.namespaces`), or
    its own ``vocab_namespace``. The encoder gets its input width from it (an ``embedding_dim`` stated on the
    encoder must agree)."""

    def __init__(self, embedding: Embedding, encoder: Lazy[Seq2VecEncoder], dropout: Probability = 0.0) -> None:
        super().__init__()
        self.embedding = embedding
        self.encoder = encoder.construct(input_dim=embedding.get_output_dim())
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
        self.output_dim = self.encoder.get_output_dim()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        embedding, encoder = arguments["embedding"], arguments["encoder"]
        if not isinstance(embedding, Lazy) or not isinstance(encoder, Lazy):
            return []
        return input_problems(encoder, output_dim(embedding), "encoder", "the embedding")

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        embedding, encoder = recipe.parts.get("embedding"), recipe.parts.get("encoder")
        return output_dim(encoder, output_dim(embedding))

    def forward(self, token_characters: torch.Tensor) -> torch.Tensor:
        batch, tokens, characters = token_characters.shape
        mask = token_characters.ne(0).reshape(batch * tokens, characters)
        embedded = self.embedding(token_characters).reshape(batch * tokens, characters, -1)
        encoded = self.encoder(embedded, mask)
        return self.dropout(encoded.reshape(batch, tokens, -1))
