"""``allennlp.modules.scalar_mix``."""

from distrain.modules.scalar_mix import ScalarMix

__all__ = [
    "ScalarMix",
]
