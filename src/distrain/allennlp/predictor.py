"""AllenNLP's ``Predictor`` under the name this layer has always exported it by (see :mod:`distrain.predictors`)."""

from distrain.predictors.predictor import Predictor

__all__ = ["Predictor"]
