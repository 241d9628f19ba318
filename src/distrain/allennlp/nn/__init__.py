"""``allennlp.nn``: the tensor utilities, initializers and activations AllenNLP models are written with."""

from distrain.allennlp.nn import util

__all__ = ["util"]
