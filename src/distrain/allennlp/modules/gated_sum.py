"""``allennlp.modules.gated_sum``."""

from distrain.modules.gated_sum import GatedSum

__all__ = [
    "GatedSum",
]
