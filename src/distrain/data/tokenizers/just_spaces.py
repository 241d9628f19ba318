"""AllenNLP's whitespace tokenizer: split on whitespace, keep case, return :class:`Token` records.

Registered as ``just_spaces`` (AllenNLP's second name for it): distrain's own ``whitespace`` lowercases
and splits off punctuation, and keeps doing so for existing configs.
"""

from __future__ import annotations

from distrain.data.tokenizer import Token, Tokenizer


@Tokenizer.register("just_spaces")
class WhitespaceTokenizer(Tokenizer):
    """AllenNLP's whitespace tokenizer: splits on whitespace only and keeps case."""

    def tokenize(self, text: str) -> list[Token]:  # type: ignore[override]
        return [Token(word) for word in text.split()]
