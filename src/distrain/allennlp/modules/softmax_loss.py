"""``allennlp.modules.softmax_loss``."""

from distrain.zoo.lm.modules.softmax_loss import SoftmaxLoss

__all__ = [
    "SoftmaxLoss",
]
