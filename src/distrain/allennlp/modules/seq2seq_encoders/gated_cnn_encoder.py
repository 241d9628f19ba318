"""``allennlp.modules.seq2seq_encoders.gated_cnn_encoder``."""

from distrain.modules.seq2seq_encoders.gated_cnn import GatedCnnEncoder

__all__ = ["GatedCnnEncoder"]
