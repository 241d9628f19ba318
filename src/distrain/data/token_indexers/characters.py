"""Each token as the ids of its characters (AllenNLP's ``characters``), for character encoders.

With a ``character_tokenizer`` the characters are that tokenizer's: with ``byte_encoding`` they are byte ids
(byte + 1) and its integer ``start_tokens``/``end_tokens`` (BiDAF's 259 and 260 around every word), which
bypass the vocabulary, as in AllenNLP."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from distrain.config.constraints import NonNegativeInt
from distrain.data.field import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text
from distrain.data.tokenizers.character import CharacterTokenizer


@TokenIndexer.register("characters")
class TokenCharactersIndexer(TokenIndexer):
    """Tensor ``token_characters`` of shape (batch, tokens, characters), padded with 0 to the batch's
    longest word and at least ``min_padding_length`` (a CNN's widest filter needs that many)."""

    def __init__(self, namespace: str = "token_characters", min_padding_length: NonNegativeInt = 0,
                 start_tokens: list[str] | None = None, end_tokens: list[str] | None = None,
                 lowercase_characters: bool = False, character_tokenizer: CharacterTokenizer | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.namespace = namespace
        self.min_padding_length = min_padding_length
        self.start_tokens = list(start_tokens or [])
        self.end_tokens = list(end_tokens or [])
        self.lowercase_characters = lowercase_characters
        self.character_tokenizer = character_tokenizer

    def _characters(self, token: Any) -> list[str | int]:
        """Each character as its text, or as its id where the character tokenizer gives one (bytes)."""
        text = token_text(token)
        if self.character_tokenizer is not None:
            return [c.text_id if c.text_id is not None else c.text for c in self.character_tokenizer.tokenize(text)]
        return list(text.lower() if self.lowercase_characters else text)

    def count_vocab_items(self, token: Any, counters: dict[str, Counter]) -> None:
        counters.setdefault(self.namespace, Counter()).update(c for c in self._characters(token) if isinstance(c, str))

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        index = lambda c: c if isinstance(c, int) else vocab.get_token_index(c, self.namespace)  # noqa: E731
        rows = [np.asarray([index(c) for c in self._characters(token)], dtype=np.int64)
                for token in [*self.start_tokens, *tokens, *self.end_tokens]]
        return {"token_characters": ArrayField(rows, 0, "nested", self.min_padding_length)}
