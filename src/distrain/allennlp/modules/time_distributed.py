"""``allennlp.modules.time_distributed``."""

from distrain.modules.time_distributed import TimeDistributed

__all__ = [
    "TimeDistributed",
]
