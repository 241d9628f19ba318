"""``allennlp.data.tokenizers.pretrained_transformer_tokenizer``."""

from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer

__all__ = [
    "PretrainedTransformerTokenizer",
]
