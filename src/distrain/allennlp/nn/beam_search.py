"""``allennlp.nn.beam_search``."""

from distrain.modules.beam_search import BeamSearch

__all__ = [
    "BeamSearch",
]
