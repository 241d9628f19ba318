"""AllenNLP's F-measures over distrain's counts: ``FBetaMeasure`` (per-class lists), ``F1Measure`` (one positive
class) and ``SpanBasedF1Measure`` (labelled spans, keyed ``f1-measure-overall`` and ``precision-TYPE``).

The counting is distrain's :class:`~distrain.metrics.fbeta.FBeta` and :class:`~distrain.metrics.span_based_f1.SpanBasedF1`;
these classes only take AllenNLP's constructor arguments and give the result AllenNLP's keys.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from distrain.metrics.f1 import F1 as F1Measure
from distrain.metrics.fbeta import FBeta
from distrain.metrics.span_based_f1 import SpanBasedF1


class FBetaMeasure(FBeta):
    """As :class:`FBeta`; without ``average`` the result is ``{"precision": [...], "recall": [...], "fscore": [...]}``,
    one entry per class in class order (or in ``labels``' order)."""

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, Any]:
        values = super().compute(stats)
        if self.average is not None:
            return values
        triples = list(values.values())
        return {"precision": triples[0::3], "recall": triples[1::3], "fscore": triples[2::3]}


class SpanBasedF1Measure(SpanBasedF1):
    """Span F1 with the tag names read from ``vocabulary``'s ``tag_namespace``."""

    def __init__(self, vocabulary: Any, tag_namespace: str = "tags", ignore_classes: Sequence[str] | None = None,
                 label_encoding: str | None = "BIO", tags_to_spans_function: Callable | None = None) -> None:
        names = vocabulary.get_index_to_token_vocabulary(tag_namespace)
        super().__init__([names[index] for index in range(len(names))], label_encoding, tags_to_spans_function,
                         ignore_classes)


__all__ = ["F1Measure", "FBetaMeasure", "SpanBasedF1Measure"]
