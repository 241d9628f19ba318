"""The target words of the next-token and masked language-model readers, as tokens their text field indexes.

A word becomes the token of its text carrying the id of its first word piece (a transformer tokenizer's, without
special tokens), so a ``pretrained_transformer`` indexer gives that piece's id and a ``single_id`` indexer the
word's own: AllenNLP's readers do the same, and leave a word split into several pieces to its first.
"""

from __future__ import annotations

import copy

from distrain.data.tokenizer import Token, Tokenizer
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
