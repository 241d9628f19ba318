"""``allennlp.nn.regularizers``: penalties on parameters chosen by regex."""

from distrain.allennlp.nn.regularizers.regularizer_applicator import RegularizerApplicator
from distrain.optim.regularizers import Regularizer, L1Regularizer, L2Regularizer

__all__ = [
    "L1Regularizer", "L2Regularizer", "Regularizer", "RegularizerApplicator",
]
