"""AllenNLP's ``elmo_characters``: each token as ELMo's 50 character ids (see
:mod:`distrain.modules.elmo_characters`), the encoding its pretrained character CNN was trained on, so no
vocabulary: the ids are fixed."""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.data.field import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text
from distrain.modules.elmo_characters import MAX_WORD_LENGTH, elmo_character_ids


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
