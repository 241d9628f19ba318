"""AllenNLP's whitespace tokenizer: split on whitespace, keep case, return :class:`Token` records.

Registered under both of AllenNLP's names, ``whitespace`` and ``just_spaces``. distrain's lowercasing,
punctuation-splitting tokenizer is ``words_and_punctuation`` (:mod:`.words_and_punctuation`).
"""

from __future__ import annotations

from distrain.data.tokenizer import Token, Tokenizer


@Tokenizer.register("just_spaces")
@Tokenizer.register("whitespace")
class WhitespaceTokenizer(Tokenizer):
    """AllenNLP's whitespace tokenizer: splits on whitespace only (``str.split``) and keeps case."""

    def tokenize(self, text: str) -> list[Token]:  # type: ignore[override]
        return [Token(word) for word in text.split()]
