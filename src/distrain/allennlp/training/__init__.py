"""``allennlp.training``: metrics (the trainer is distrain's, configured by the ``trainer`` block)."""

from distrain.allennlp.training import metrics

__all__ = [
    "metrics",
]
