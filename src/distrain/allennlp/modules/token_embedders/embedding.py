"""``allennlp.modules.token_embedders.embedding``: the embedding, and AllenNLP's readers of pretrained vector files
(:mod:`distrain.modules.token_embedders.embeddings_text_file` opens them, archives and compressions included)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.errors import ConfigError
from distrain.modules.token_embedders.embedding import Embedding, read_vectors
from distrain.modules.token_embedders.embeddings_text_file import (EmbeddingsTextFile, format_embeddings_file_uri,
                                                                    parse_embeddings_file_uri)

__all__ = ["Embedding", "EmbeddingsTextFile", "format_embeddings_file_uri", "parse_embeddings_file_uri",
           "read_embedding_tokens"]


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
