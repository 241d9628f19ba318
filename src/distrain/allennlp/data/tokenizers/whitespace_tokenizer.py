"""``allennlp.data.tokenizers.whitespace_tokenizer``."""

from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer

__all__ = [
    "WhitespaceTokenizer",
]
