"""``allennlp.modules.lstm_cell_with_projection``."""

from distrain.modules.elmo_lstm import LstmCellWithProjection

__all__ = [
    "LstmCellWithProjection",
]
