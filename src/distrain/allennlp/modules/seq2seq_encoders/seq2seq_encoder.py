"""``allennlp.modules.seq2seq_encoders.seq2seq_encoder``."""

from distrain.modules.seq2seq_encoder import Seq2SeqEncoder

__all__ = [
    "Seq2SeqEncoder",
]
