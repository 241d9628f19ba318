"""``allennlp.modules.residual_with_layer_dropout``."""

from distrain.modules.residual_with_layer_dropout import ResidualWithLayerDropout

__all__ = [
    "ResidualWithLayerDropout",
]
