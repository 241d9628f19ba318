"""``allennlp.data.tokenizers.token_class``."""

from distrain.data.tokenizer import Token

__all__ = [
    "Token",
]
