"""``pos_tag``: one id per token, of its part-of-speech tag (AllenNLP 0.9's ``PosTagIndexer``; allennlp-models'
composed transformer fixture still names it, though AllenNLP 2.x dropped it).

The fine tag (``tag_``) unless ``coarse_tags`` (``pos_``); a token without one (a start symbol, or any token of
a tokenizer that tags nothing) is ``NONE``."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from distrain.data.field import ArrayField
from distrain.data.token_indexer import TokenIndexer

MISSING_TAG = "NONE"


@TokenIndexer.register("pos_tag")
class PosTagIndexer(TokenIndexer):
    """One id per token, of its part-of-speech tag (AllenNLP 0.9's indexer)."""

    def __init__(self, namespace: str = "pos_tokens", coarse_tags: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.namespace = namespace
        self.coarse_tags = coarse_tags

    def _tag(self, token: Any) -> str:
        return getattr(token, "pos_" if self.coarse_tags else "tag_", None) or MISSING_TAG

    def count_vocab_items(self, token: Any, counters: dict[str, Counter]) -> None:
        counters.setdefault(self.namespace, Counter())[self._tag(token)] += 1

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        ids = [vocab.get_token_index(self._tag(token), self.namespace) for token in tokens]
        return {"tokens": ArrayField(np.asarray(ids, dtype=np.int64))}
