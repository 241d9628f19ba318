"""``allennlp.modules.elmo_lstm``."""

from distrain.modules.elmo_lstm import ElmoLstm

__all__ = [
    "ElmoLstm",
]
