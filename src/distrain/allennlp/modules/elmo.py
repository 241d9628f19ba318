"""``allennlp.modules.elmo``."""

from distrain.modules.elmo import Elmo, ElmoBiLm as _ElmoBiLm, remove_sentence_boundaries

__all__ = [
    "Elmo", "_ElmoBiLm", "remove_sentence_boundaries",
]
