"""``allennlp.modules.augmented_lstm``."""

from distrain.modules.augmented_lstm import AugmentedLstm

__all__ = [
    "AugmentedLstm",
]
