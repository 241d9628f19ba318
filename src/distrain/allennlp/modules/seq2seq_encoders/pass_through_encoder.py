"""``allennlp.modules.seq2seq_encoders.pass_through_encoder``."""

from distrain.modules.seq2seq_encoders.pass_through import PassThroughEncoder

__all__ = [
    "PassThroughEncoder",
]
