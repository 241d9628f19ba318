"""AllenNLP's ``elmo_characters``: each token as ELMo's 50 character ids, the encoding its pretrained
character CNN was trained on (so no vocabulary: the ids are fixed).

A word is its UTF-8 bytes (0-255) cut to 48, framed by begin-of-word (258) and end-of-word (259) and
padded with 260; ``<S>`` and ``</S>`` are the single characters 256 and 257 so framed. Every id is
shifted by one so that 0 is left for padding tokens: a padded token is 50 zeros, which is how the
ELMo encoder tells real tokens from padding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.data.fields import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text

MAX_WORD_LENGTH = 50
BEGIN_SENTENCE, END_SENTENCE = 256, 257
BEGIN_WORD, END_WORD, PADDING = 258, 259, 260
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"


def _framed(characters: list[int]) -> list[int]:
    """``characters`` between begin- and end-of-word, padded to 50, each id shifted by one."""
    ids = [BEGIN_WORD, *characters, END_WORD] + [PADDING] * (MAX_WORD_LENGTH - len(characters) - 2)
    return [i + 1 for i in ids]


#: the ids of the sentence boundaries the ELMo encoder adds around each sentence
BEGIN_SENTENCE_IDS = _framed([BEGIN_SENTENCE])
END_SENTENCE_IDS = _framed([END_SENTENCE])


def elmo_character_ids(word: str, tokens_to_add: dict[str, int] | None = None) -> list[int]:
    """The 50 ids of ``word`` (AllenNLP's ``ELMoCharacterMapper.convert_word_to_char_ids``)."""
    if tokens_to_add and word in tokens_to_add:
        return _framed([tokens_to_add[word]])
    if word == BOS_TOKEN:
        return list(BEGIN_SENTENCE_IDS)
    if word == EOS_TOKEN:
        return list(END_SENTENCE_IDS)
    return _framed(list(word.encode("utf-8", "ignore")[: MAX_WORD_LENGTH - 2]))


@TokenIndexer.register("elmo_characters")
class ELMoTokenCharactersIndexer(TokenIndexer):
    """Tensor ``elmo_tokens`` of shape (batch, tokens, 50) for the ``elmo_token_embedder``.
    ``tokens_to_add`` gives special tokens one character id each (below 261 for a pretrained model;
    AllenNLP suggests unused ones, 1-32). ``namespace`` is accepted for AllenNLP's configs: nothing is
    counted into it."""

    def __init__(self, namespace: str = "elmo_characters", tokens_to_add: dict[str, int] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.namespace = namespace
        self.tokens_to_add = dict(tokens_to_add or {})

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        rows = [np.asarray(elmo_character_ids(token_text(token), self.tokens_to_add), dtype=np.int64)
                for token in tokens]
        return {"elmo_tokens": ArrayField(rows, 0, "nested", MAX_WORD_LENGTH)}
