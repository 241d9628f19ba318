"""``allennlp.modules.sampled_softmax_loss``."""

from distrain.zoo.lm.modules.sampled_softmax_loss import SampledSoftmaxLoss

__all__ = [
    "SampledSoftmaxLoss",
]
