"""``allennlp.data.tokenizers.spacy_tokenizer``."""

from distrain.data.tokenizers.spacy import SpacyTokenizer

__all__ = [
    "SpacyTokenizer",
]
