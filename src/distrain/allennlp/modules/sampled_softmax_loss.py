"""``allennlp.modules.sampled_softmax_loss``: the sampled softmax and AllenNLP's ``_choice`` (``num_samples``
distinct ids drawn log-uniformly below ``num_words``, and how many draws that took)."""

from __future__ import annotations

import numpy as np

from distrain.zoo.lm.modules.sampled_softmax_loss import SampledSoftmaxLoss, log_uniform_choice

__all__ = [
    "SampledSoftmaxLoss", "_choice",
]


def _choice(num_words: int, num_samples: int) -> tuple[np.ndarray, int]:
    return log_uniform_choice(np.random.default_rng(np.random.randint(2**31)), num_words, num_samples)
