"""``allennlp.models.basic_classifier``: distrain's ``basic_classifier``, registered under AllenNLP's name."""

from distrain.models.basic_classifier import BasicClassifier

__all__ = ["BasicClassifier"]
