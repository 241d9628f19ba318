"""The target words of the next-token and masked language-model readers, as tokens their text field indexes.

A word becomes the token of its text carrying the id of its first word piece (a transformer tokenizer's, without
special tokens), so a ``pretrained_transformer`` indexer gives that piece's id and a ``single_id`` indexer the
word's own: AllenNLP's readers do the same, and leave a word split into several pieces to its first.
"""

from __future__ import annotations

import copy

from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer


def targets_tokenizer(tokenizer: Tokenizer) -> Tokenizer:
    """The tokenizer that splits a target word: ``tokenizer`` itself, or a transformer one's copy that adds no
    special tokens (a target is a piece of a sentence, not one)."""
    if isinstance(tokenizer, PretrainedTransformerTokenizer):
        pieces = copy.copy(tokenizer)
        pieces.adds_special_tokens = False
        return pieces
    return tokenizer


def target_token(word: str, tokenizer: Tokenizer) -> Token:
    """``word`` with the id and type id of its first piece under ``tokenizer`` (see :func:`targets_tokenizer`)."""
    pieces = tokenizer.tokenize(word)
    if not pieces:
        raise ValueError(f"the target {word!r} has no tokens under the reader's tokenizer")
    first = pieces[0]
    return Token(word, text_id=getattr(first, "text_id", None), type_id=getattr(first, "type_id", None))


class SentenceTargetsReader(DatasetReader):
    """What both readers share: a whitespace tokenizer unless given (and its :func:`targets_tokenizer`),
    ``single_id`` indexing unless given, and a record ``{"sentence": ...}`` read without targets."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.targets_tokenizer = targets_tokenizer(self.tokenizer)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    def input_fields(self) -> dict[str, str]:
        return {"sentence": "text"}

    def record_to_instance(self, record: dict) -> dict:
        return self.text_to_instance(sentence=self.require(record, "sentence", str, "a string"))
