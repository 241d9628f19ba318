"""``allennlp.training.metrics.metric``: the metric base."""

from distrain.metrics.metric import Metric

__all__ = [
    "Metric",
]
