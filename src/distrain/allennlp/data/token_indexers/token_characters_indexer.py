"""``allennlp.data.token_indexers.token_characters_indexer``: distrain's ``characters`` indexer with AllenNLP's
positional order (``namespace, character_tokenizer, start_tokens, end_tokens, min_padding_length``) and its
warning that a ``min_padding_length`` of 0 breaks a CNN wider than the batch's longest word."""

from __future__ import annotations

import warnings
from typing import Any

from distrain.data.token_indexers.characters import TokenCharactersIndexer as DistrainTokenCharactersIndexer

__all__ = ["TokenCharactersIndexer"]


class TokenCharactersIndexer(DistrainTokenCharactersIndexer):
    def __init__(self, namespace: str = "token_characters", character_tokenizer: Any = None,
                 start_tokens: list[str] | None = None, end_tokens: list[str] | None = None,
                 min_padding_length: int = 0, token_min_padding_length: int = 0,
                 lowercase_characters: bool = False) -> None:
        if min_padding_length == 0:
            warnings.warn("You are using the default value (0) of `min_padding_length`, which can cause some subtle "
                          "bugs (more info see https://github.com/allenai/allennlp/issues/1954). Strongly recommend "
                          "to set a value, usually the maximum size of the convolutional layer size when using "
                          "CnnEncoder.", UserWarning)
        super().__init__(namespace, min_padding_length, start_tokens, end_tokens, lowercase_characters,
                         character_tokenizer, token_min_padding_length=token_min_padding_length)
