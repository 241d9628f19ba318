"""Span F1 as AllenNLP's ``SpanBasedF1Measure`` counts it: spans read from each sequence's tag names by a
tags-to-spans function (BIO, IOB1, BIOUL, BMES, or the caller's own), ``C-`` continuation spans merged into the
span they continue, counts kept per span label, and only the labels seen reported.

distrain's own ``span_f1`` (:mod:`distrain.metrics.span_f1`) checks every tag name against its scheme when the
model is built; this one, like AllenNLP's, meets a tag only when a sequence uses it (a namespace may hold tags of
several schemes), so a user's code written for AllenNLP counts the same spans.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Sequence

import torch

from distrain.data import span_tags
from distrain.errors import ConfigError
from distrain.metrics.fbeta import fbeta_score, ratio
from distrain.metrics.metric import Metric

TAGS_TO_SPANS = {"BIO": span_tags.bio_tags_to_spans, "IOB1": span_tags.iob1_tags_to_spans,
                 "BIOUL": span_tags.bioul_tags_to_spans, "BMES": span_tags.bmes_tags_to_spans}


def merge_continued_spans(spans: Sequence[tuple[str, tuple[int, int]]]) -> list[tuple[str, tuple[int, int]]]:
    """Each ``C-LABEL`` span and the spans of ``LABEL`` it continues, as one ``LABEL`` span covering them."""
    found = set(spans)
    for label in [label[2:] for label, _ in found if label.startswith("C-")]:
        joined = {span for span in found if label in span[0]}
        found -= joined
        found.add((label, (min(s[1][0] for s in joined), max(s[1][1] for s in joined))))
    return list(found)


class SpanBasedF1(Metric):
    """``tag_names``: the tag of each id; ``label_encoding`` or ``tags_to_spans_function`` (exactly one) reads the
    spans; ``ignore_classes``: span labels left out. Labels are counted in the order of the tag names' labels (the
    same on every worker); a label none of them has (a caller's spans function) is appended when first met. The result has ``precision-LABEL``, ``recall-LABEL``,
    ``f1-measure-LABEL`` per label seen and the same with ``-overall``."""

    summed = ("true_positive", "predicted", "gold")

    def __init__(self, tag_names: Sequence[str], label_encoding: str | None = "BIO",
                 tags_to_spans_function: Callable | None = None, ignore_classes: Sequence[str] | None = None) -> None:
        super().__init__()
        if label_encoding and tags_to_spans_function:
            raise ConfigError("give label_encoding or tags_to_spans_function, not both")
        if label_encoding is None and tags_to_spans_function is None:
            raise ConfigError("give label_encoding or tags_to_spans_function")
        if label_encoding and label_encoding not in TAGS_TO_SPANS:
            raise ConfigError(f"unknown label_encoding {label_encoding!r}: {', '.join(TAGS_TO_SPANS)}")
        self.tag_names = list(tag_names)
        self.label_encoding = label_encoding
        self.tags_to_spans = tags_to_spans_function
        self.ignore_classes = list(ignore_classes or ())
        self.span_labels = sorted({name.partition("-")[2] for name in self.tag_names if name != "O"}
                                  | {name[2:] for name in self.tag_names if name.startswith("C-")})

    def _spans(self, tags: list[str]) -> list[tuple[str, tuple[int, int]]]:
        if self.label_encoding is None:
            return merge_continued_spans(self.tags_to_spans(tags))
        return merge_continued_spans(TAGS_TO_SPANS[self.label_encoding](tags, self.ignore_classes))

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None,
                 prediction_map: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach().cpu(), gold_labels.detach().cpu()
        mask = torch.ones_like(gold_labels, dtype=torch.bool) if mask is None else mask.detach().cpu().bool()
        if gold_labels.numel() and int(gold_labels.max()) >= predictions.size(-1):
            raise ConfigError(f"a gold label id is not below the number of classes, {predictions.size(-1)}")
        predicted = predictions.argmax(-1)
        if prediction_map is not None:
            prediction_map = prediction_map.detach().cpu()
            predicted = torch.gather(prediction_map, 1, predicted)
            gold_labels = torch.gather(prediction_map, 1, gold_labels.long())
        rows = []
        for row_predicted, row_gold, length in zip(predicted, gold_labels.long(), mask.sum(-1).tolist()):
            if length:
                rows.append((self._spans([self.tag_names[i] for i in row_predicted[:length].tolist()]),
                             self._spans([self.tag_names[i] for i in row_gold[:length].tolist()])))
        for label, _ in [span for pair in rows for spans in pair for span in spans]:
            if label not in self.span_labels:  # a label no tag name has (a caller's own spans function)
                self.span_labels.append(label)
        position = {label: i for i, label in enumerate(self.span_labels)}
        counts = torch.zeros(3, len(self.span_labels), dtype=torch.float64)
        for found, expected in rows:
            left = list(expected)
            for label, span in found:
                counts[1, position[label]] += 1
                if (label, span) in left:
                    counts[0, position[label]] += 1
                    left.remove((label, span))
            for label, _ in expected:
                counts[2, position[label]] += 1
        self.accumulate(true_positive=counts[0], predicted=counts[1], gold=counts[2])

    def _padded(self, stats: dict[str, torch.Tensor], name: str) -> torch.Tensor:
        """A statistic with one count per span label known (labels first met after it was kept count 0)."""
        width = len(self.span_labels)
        value = stats.get(name, torch.zeros(0, dtype=torch.float64)).reshape(-1)[:width]
        return torch.cat([value, value.new_zeros(width - value.numel())])

    def _counts(self, kind: str) -> dict[str, int]:
        """This worker's count per span label of one kind, as AllenNLP's metric holds them (only labels seen)."""
        state = self.state()
        true_positive, predicted, gold = (self._padded(state, name) for name in self.summed)
        values = {"true_positives": true_positive, "false_positives": predicted - true_positive,
                  "false_negatives": gold - true_positive}[kind]
        return defaultdict(int, {label: int(value) for label, value in zip(self.span_labels, values.tolist()) if value})

    @property
    def _true_positives(self) -> dict[str, int]:
        return self._counts("true_positives")

    @property
    def _false_positives(self) -> dict[str, int]:
        return self._counts("false_positives")

    @property
    def _false_negatives(self) -> dict[str, int]:
        return self._counts("false_negatives")

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        true_positive, predicted, gold = (self._padded(stats, name) for name in self.summed)
        result: dict[str, float] = {}
        for i, label in enumerate(self.span_labels):
            if predicted[i] > 0 or gold[i] > 0:
                result.update(_scores(label, true_positive[i], predicted[i], gold[i]))
        result.update(_scores("overall", true_positive.sum(), predicted.sum(), gold.sum()))
        return result


def _scores(label: str, true_positive: torch.Tensor, predicted: torch.Tensor, gold: torch.Tensor) -> dict[str, float]:
    return {f"precision-{label}": float(ratio(true_positive, predicted)),
            f"recall-{label}": float(ratio(true_positive, gold)),
            f"f1-measure-{label}": float(fbeta_score(true_positive, predicted, gold, 1.0))}
