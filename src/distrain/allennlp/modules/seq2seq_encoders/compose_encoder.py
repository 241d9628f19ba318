"""``allennlp.modules.seq2seq_encoders.compose_encoder``."""

from distrain.modules.seq2seq_encoders.compose import ComposeEncoder

__all__ = ["ComposeEncoder"]
