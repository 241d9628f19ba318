"""``allennlp.modules.layer_norm``."""

from distrain.modules.layer_norm import LayerNorm

__all__ = [
    "LayerNorm",
]
