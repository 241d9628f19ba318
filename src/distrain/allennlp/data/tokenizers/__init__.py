"""``allennlp.data.tokenizers``: text to tokens."""

from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.tokenizers.character import CharacterTokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer
from distrain.data.tokenizers.letters_digits import LettersDigitsTokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer

__all__ = [
    "CharacterTokenizer", "LettersDigitsTokenizer", "PretrainedTransformerTokenizer", "SpacyTokenizer", "Token",
    "Tokenizer", "WhitespaceTokenizer",
]
