"""``allennlp.nn.activations``: activations by name."""

from distrain.modules.activation import Activation

__all__ = [
    "Activation",
]
