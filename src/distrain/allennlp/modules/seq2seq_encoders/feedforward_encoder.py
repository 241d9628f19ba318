"""``allennlp.modules.seq2seq_encoders.feedforward_encoder``."""

from distrain.modules.seq2seq_encoders.feedforward import FeedForwardEncoder

__all__ = ["FeedForwardEncoder"]
