"""``allennlp.modules.bimpm_matching``."""

from distrain.zoo.pair_classification.modules.bimpm_matching import BiMpmMatching

__all__ = [
    "BiMpmMatching",
]
