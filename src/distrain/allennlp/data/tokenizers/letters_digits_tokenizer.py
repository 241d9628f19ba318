"""``allennlp.data.tokenizers.letters_digits_tokenizer``."""

from distrain.data.tokenizers.letters_digits import LettersDigitsTokenizer

__all__ = [
    "LettersDigitsTokenizer",
]
