"""``allennlp.nn``: the tensor utilities, initializers, regularizers and activations AllenNLP models are written with."""

from distrain.allennlp.nn import util
from distrain.allennlp.nn.initializers import Initializer, InitializerApplicator
from distrain.allennlp.nn.regularizers import RegularizerApplicator
from distrain.modules.activation import Activation

__all__ = ["Activation", "Initializer", "InitializerApplicator", "RegularizerApplicator", "util"]
