"""``allennlp.modules.seq2seq_encoders.pytorch_transformer_wrapper``."""

from distrain.modules.seq2seq_encoders.pytorch_transformer import PytorchTransformer

__all__ = [
    "PytorchTransformer",
]
