"""``allennlp.models``: the ``Model`` base, archives, and the models AllenNLP's core ships that distrain
registers under the same names (``basic_classifier``, ``simple_tagger``)."""

from distrain.allennlp.models.archival import Archive, load_archive
from distrain.allennlp.models.basic_classifier import BasicClassifier
from distrain.allennlp.models.model import Model
from distrain.allennlp.models.simple_tagger import SimpleTagger

__all__ = ["Archive", "BasicClassifier", "Model", "SimpleTagger", "load_archive"]
