"""``allennlp.data.tokenizers.tokenizer``."""

from distrain.data.tokenizer import Token, Tokenizer

__all__ = [
    "Token", "Tokenizer",
]
