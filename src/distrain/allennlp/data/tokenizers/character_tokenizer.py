"""``allennlp.data.tokenizers.character_tokenizer``."""

from distrain.data.tokenizers.character import CharacterTokenizer

__all__ = [
    "CharacterTokenizer",
]
