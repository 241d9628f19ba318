"""``allennlp.predictors``: the ``Predictor`` base (JSON in, the model's outputs as JSON out) that users'
predictors subclass and register, and that ``allennlp predict --predictor NAME`` looks up."""

from distrain.allennlp.predictors.predictor import Predictor

__all__ = ["Predictor"]
