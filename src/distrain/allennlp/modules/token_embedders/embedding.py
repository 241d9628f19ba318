"""``allennlp.modules.token_embedders.embedding``: the embedding, and AllenNLP's readers of pretrained vector files
(:mod:`distrain.modules.token_embedders.embeddings_text_file` opens them, archives and compressions included)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.errors import ConfigError
from distrain.modules.token_embedders.embedding import Embedding as DistrainEmbedding
from distrain.modules.token_embedders.embedding import read_vectors
from distrain.modules.token_embedders.embeddings_text_file import (EmbeddingsTextFile, format_embeddings_file_uri,
                                                                    parse_embeddings_file_uri)

__all__ = ["Embedding", "EmbeddingsTextFile", "format_embeddings_file_uri", "parse_embeddings_file_uri",
           "read_embedding_tokens"]


class Embedding(DistrainEmbedding):
    """distrain's ``embedding`` with AllenNLP's ``weight`` (a ``(num_embeddings, embedding_dim)`` tensor to start from,
    as AllenNLP's Python callers pass it)."""

    def __init__(self, embedding_dim: int | None = None, num_embeddings: int | None = None,
                 projection_dim: int | None = None, weight: Any = None, padding_index: int | None = None,
                 trainable: bool = True, max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, vocab_namespace: str | None = None,
                 pretrained_file: str | None = None, vocab: Any = None) -> None:
        if weight is not None:
            num_embeddings, embedding_dim = (num_embeddings or weight.shape[0]), (embedding_dim or weight.shape[1])
        super().__init__(embedding_dim, num_embeddings, projection_dim, padding_index, trainable, max_norm, norm_type,
                         scale_grad_by_freq, sparse, vocab_namespace, pretrained_file, vocab)
        if weight is not None:
            with torch.no_grad():
                self.weight.copy_(torch.as_tensor(weight, dtype=self.weight.dtype))


def read_embedding_tokens(embeddings_file_uri: str) -> list[str]:
    """The tokens of a vectors file, in file order (what ``pretrained_files`` offers a vocabulary)."""
    with EmbeddingsTextFile(embeddings_file_uri) as lines:
        return [line.rstrip("\n").split(" ", 1)[0] for line in lines if line.strip()]


def _read_pretrained_embeddings_file(file_uri: str, embedding_dim: int, vocab: Any,
                                     namespace: str = "tokens") -> torch.Tensor:
    """A ``(vocabulary size, embedding_dim)`` matrix from a vectors file (distrain's ``read_vectors``); a
    :class:`ConfigError` where no vector of the namespace's tokens has that width, as AllenNLP's."""
    try:
        return read_vectors(file_uri, vocab, namespace, embedding_dim)
    except ValueError as problem:
        raise ConfigError(str(problem)) from None
