"""``allennlp.modules.masked_layer_norm``."""

from distrain.modules.layer_norm import MaskedLayerNorm

__all__ = ["MaskedLayerNorm"]
