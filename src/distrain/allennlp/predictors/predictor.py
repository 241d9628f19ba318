"""``allennlp.predictors.predictor``: :class:`distrain.allennlp.predictor.Predictor` under AllenNLP's path."""

from distrain.allennlp.predictor import Predictor

__all__ = ["Predictor"]
