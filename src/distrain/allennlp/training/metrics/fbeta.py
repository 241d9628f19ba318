"""AllenNLP's F-measures over distrain's counts: ``FBetaMeasure`` (per-class lists), ``F1Measure`` (one positive
class) and ``SpanBasedF1Measure`` (labelled spans, keyed ``f1-measure-overall`` and ``precision-TYPE``).

The counting is distrain's :class:`~distrain.metrics.fbeta.FBeta` and :class:`~distrain.metrics.span_f1.SpanF1`;
these classes only take AllenNLP's constructor arguments and give the result AllenNLP's keys.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from distrain.metrics.f1 import F1 as F1Measure
from distrain.metrics.fbeta import FBeta
from distrain.metrics.span_f1 import SpanF1


class FBetaMeasure(FBeta):
    """As :class:`FBeta`; without ``average`` the result is ``{"precision": [...], "recall": [...], "fscore": [...]}``,
    one entry per class in class order (or in ``labels``' order)."""

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, Any]:
        values = super().compute(stats)
        if self.average is not None:
            return values
        triples = list(values.values())
        return {"precision": triples[0::3], "recall": triples[1::3], "fscore": triples[2::3]}


class SpanBasedF1Measure(SpanF1):
    """Span F1 with the tag names read from ``vocabulary``'s ``tag_namespace``; ``ignore_classes`` are span types
    left out; ``prediction_map`` (on a call) maps the predicted ids to tag ids."""

    def __init__(self, vocabulary: Any, tag_namespace: str = "tags", ignore_classes: Sequence[str] | None = None,
                 label_encoding: str | None = "BIO", tags_to_spans_function: Callable | None = None) -> None:
        if tags_to_spans_function is not None:
            raise ValueError("SpanBasedF1Measure: tags_to_spans_function is not supported; give label_encoding")
        if label_encoding not in ("BIO", "IOB1", "BIOUL", "BMES"):
            raise ValueError(f"unknown label_encoding {label_encoding!r}: BIO, IOB1, BIOUL or BMES")
        super().__init__(tag_scheme=label_encoding)
        self.ignore_classes = set(ignore_classes or ())
        names = vocabulary.get_index_to_token_vocabulary(tag_namespace)
        self.set_label_names([names[index] for index in range(len(names))])

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None,
                 prediction_map: torch.Tensor | None = None) -> None:
        if gold_labels.dim() + 1 == predictions.dim():
            predictions = predictions.argmax(-1)
        if prediction_map is not None:
            predictions = torch.gather(prediction_map, 1, predictions.long())
            gold_labels = torch.gather(prediction_map, 1, gold_labels.long())
        super().__call__(predictions, gold_labels, mask)

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        if self.ignore_classes:
            keep = [i for i, kind in enumerate(self.types) if kind not in self.ignore_classes]
            stats = {name: value[keep] for name, value in stats.items()}
            kept_types, self.types = self.types, [self.types[i] for i in keep]
            try:
                values = super().compute(stats)
            finally:
                self.types = kept_types
        else:
            values = super().compute(stats)
        renamed = {}
        for key, value in values.items():
            kind, _, measure = key.rpartition("_")
            measure = "f1-measure" if measure == "f1" else measure
            renamed[f"{measure}-{kind}" if kind else f"{measure}-overall"] = value
        return renamed


__all__ = ["F1Measure", "FBetaMeasure", "SpanBasedF1Measure"]
