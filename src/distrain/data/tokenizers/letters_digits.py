"""AllenNLP's ``letters_digits`` tokenizer: runs of letters, runs of digits, and every other visible
character on its own; each token keeps its character offset."""

from __future__ import annotations

import re

from distrain.data.tokenizer import Token, Tokenizer, with_boundary_tokens

#: ``[^\W\d_]`` is a word character that is neither a digit nor ``_``: a letter in any script
_LETTERS_DIGITS = re.compile(r"[^\W\d_]+|\d+|\S")


@Tokenizer.register("letters_digits")
class LettersDigitsTokenizer(Tokenizer):
    """``start_tokens`` and ``end_tokens`` are AllenNLP 0.9's word-tokenizer options (2.x dropped them here);
    they are added at offsets 0 and -1, as that tokenizer did."""

    def __init__(self, start_tokens: list[str] | None = None, end_tokens: list[str] | None = None) -> None:
        self.start_tokens = start_tokens
        self.end_tokens = end_tokens

    def tokenize(self, text: str) -> list[Token]:  # type: ignore[override]
        tokens = [Token(match.group(), idx=match.start()) for match in _LETTERS_DIGITS.finditer(text)]
        return with_boundary_tokens(tokens, self.start_tokens, self.end_tokens)
