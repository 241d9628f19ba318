"""``allennlp.models.simple_tagger``: distrain's ``simple_tagger``, registered under AllenNLP's name."""

from distrain.models.simple_tagger import SimpleTagger

__all__ = ["SimpleTagger"]
