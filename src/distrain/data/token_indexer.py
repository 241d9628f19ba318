"""TokenIndexer base: how one text field's tokens become tensors (AllenNLP's contract).

A text field may carry several indexers (word ids, characters, word pieces); each names the tensors it
makes, and the model receives ``{indexer name: {tensor name: tensor}}`` for the field. Indexers count
vocabulary items in the parent's counting pass and index with the finished vocabulary, so they run
once, in the process that prepares the data.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from distrain.config.constraints import NonNegativeInt
from distrain.data.field import ArrayField
from distrain.registry import Registrable


def token_text(token: Any) -> str:
    """A token's text, whether the reader made strings or :class:`~distrain.data.tokenizer.Token`."""
    return token if isinstance(token, str) else token.text


class TokenIndexer(Registrable):
    """``token_min_padding_length`` is accepted for AllenNLP configs; batches pad to their longest field."""

    default_implementation = "single_id"

    def __init__(self, token_min_padding_length: NonNegativeInt = 0) -> None:
        self.token_min_padding_length = token_min_padding_length

    def count_vocab_items(self, token: Any, counters: dict[str, Counter]) -> None:
        """Add ``token``'s vocabulary items (the vocabulary is built from these counts)."""

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        """The tensors for one field: name → an indexed :class:`ArrayField`."""
        raise NotImplementedError
