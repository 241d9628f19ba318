"""distrain's regex word splitter: runs of word characters, and each punctuation mark on its own.

Registered as ``words_and_punctuation``. It was distrain's ``whitespace`` until that name became AllenNLP's
(:mod:`distrain.data.tokenizers.just_spaces`: split on whitespace, keep case), so an AllenNLP config naming
``whitespace`` builds AllenNLP's vocabulary.
"""

from __future__ import annotations

import re

from distrain.config.constraints import PositiveInt
from distrain.data.tokenizer import Tokenizer

_WORDS = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@Tokenizer.register("words_and_punctuation")
class WordTokenizer(Tokenizer):
    """Words (runs of word characters) and each punctuation mark on its own; lowercased by default."""

    def __init__(self, lowercase: bool = True, max_length: PositiveInt | None = None) -> None:
        self.lowercase = lowercase
        self.max_length = max_length

    def tokenize(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        tokens = _WORDS.findall(text)
        return tokens[: self.max_length] if self.max_length else tokens
