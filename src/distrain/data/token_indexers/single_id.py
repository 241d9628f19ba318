"""One id per token, from a vocabulary namespace (AllenNLP's ``single_id``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from distrain.data.field import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text


@TokenIndexer.register("single_id")
class SingleIdTokenIndexer(TokenIndexer):
    """Tensor ``tokens``: each token's index in ``namespace`` (a token's own ``text_id`` wins, as in
    AllenNLP; ``namespace: null`` uses only those). ``start_tokens``/``end_tokens`` wrap the sequence;
    ``default_value`` stands for a ``feature_name`` a token lacks (a start symbol has no part of speech)."""

    def __init__(self, namespace: str | None = "tokens", lowercase_tokens: bool = False,
                 start_tokens: list[str] | None = None, end_tokens: list[str] | None = None,
                 feature_name: str = "text", default_value: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.namespace = namespace
        self.lowercase_tokens = lowercase_tokens
        self.start_tokens = list(start_tokens or [])
        self.end_tokens = list(end_tokens or [])
        self.feature_name = feature_name
        self.default_value = default_value

    def _text(self, token: Any) -> str:
        text = token_text(token) if self.feature_name == "text" else getattr(token, self.feature_name, None)
        if text is None and self.feature_name != "text":
            if self.default_value is None:
                raise ValueError(f"token {token_text(token)!r} has no {self.feature_name} and the single_id indexer "
                                 "has no default_value")
            text = self.default_value
        return text.lower() if self.lowercase_tokens else text

    def count_vocab_items(self, token: Any, counters: dict[str, Counter]) -> None:
        if self.namespace is not None and getattr(token, "text_id", None) is None:
            counters.setdefault(self.namespace, Counter())[self._text(token)] += 1

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        ids = []
        for token in [*self.start_tokens, *tokens, *self.end_tokens]:
            text_id = getattr(token, "text_id", None)
            ids.append(text_id if text_id is not None else vocab.get_token_index(self._text(token), self.namespace))
        return {"tokens": ArrayField(np.asarray(ids, dtype=np.int64))}
