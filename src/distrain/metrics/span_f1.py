"""Precision, recall and F1 of labelled spans (entities, chunks) decoded from BIO, IOB1, BIOUL or BMES tags."""

from __future__ import annotations

from typing import Literal, Sequence

import torch

from distrain.metrics.classes import predicted_classes
from distrain.metrics.fbeta import fbeta_score, ratio
from distrain.metrics.metric import Metric

#: BIOUL's L(ast) and U(nit) are conlleval's E(nd) and S(ingle)
_PREFIXES = {"BIO": {"B": "B", "I": "I"}, "IOB1": {"B": "B", "I": "I"},
             "BIOUL": {"B": "B", "I": "I", "L": "E", "U": "S"}, "BMES": {"B": "B", "M": "I", "E": "E", "S": "S"}}


def tag_parts(tag: str, scheme: str) -> tuple[str, str]:
    """``("B", "PER")`` for ``"B-PER"``; ``("O", "")`` for ``"O"``; ValueError for a tag outside the scheme."""
    if tag == "O":
        return "O", ""
    prefix, dash, kind = tag.partition("-")
    if not dash or not kind or prefix not in _PREFIXES[scheme]:
        raise ValueError(f"tag {tag!r} is not a {scheme} tag (expected O or {'/'.join(_PREFIXES[scheme])}-TYPE)")
    return _PREFIXES[scheme][prefix], kind


def _ends(previous: str, tag: str, previous_kind: str, kind: str) -> bool:
    """Whether a chunk ends before this tag (conlleval's rules)."""
    return (
        previous in ("E", "S")
        or (previous in ("B", "I") and tag in ("B", "S", "O"))
        or (previous != "O" and previous_kind != kind)
    )


def _starts(previous: str, tag: str, previous_kind: str, kind: str) -> bool:
    """Whether a chunk starts at this tag; an I or E with nothing open starts one, as in conlleval."""
    return (
        tag in ("B", "S")
        or (previous in ("E", "S", "O") and tag in ("E", "I"))
        or (tag != "O" and previous_kind != kind)
    )


def spans(tags: Sequence[tuple[str, str]]) -> set[tuple[str, int, int]]:
    """``(type, first, last)`` for each chunk of a sequence of ``(prefix, type)`` pairs."""
    found = set()
    previous, previous_kind, begin = "O", "", 0
    for position, (tag, kind) in enumerate([*tags, ("O", "")]):
        if _ends(previous, tag, previous_kind, kind):
            found.add((previous_kind, begin, position - 1))
        if _starts(previous, tag, previous_kind, kind):
            begin = position
        previous, previous_kind = tag, kind
    return found


@Metric.register("span_f1")
class SpanF1(Metric):
    """Precision, recall and F1 of labelled spans from BIO, IOB1, BIOUL or BMES tags, per type and overall.

    ``predictions``: tag scores ``[B, T, C]`` or tag ids ``[B, T]``; ``gold_labels``: ``[B, T]``;
    ``mask``: ``[B, T]``. Needs the tag names: the model passes its tag vocabulary.

    A predicted span counts when its type, start and end all match a gold span. Counts are kept
    per span type and summed over workers. The result has ``TYPE_precision``, ``TYPE_recall``,
    ``TYPE_f1`` per type and the overall (micro) ``precision``, ``recall``, ``f1``.
    """

    summed = ("true_positive", "predicted", "gold")

    def __init__(self, tag_scheme: Literal["BIO", "IOB1", "BIOUL", "BMES"] = "BIO") -> None:
        super().__init__()
        self.tag_scheme = tag_scheme
        self._parts: list[tuple[str, str]] = []
        self.types: list[str] = []

    def set_label_names(self, names: Sequence[str]) -> None:
        super().set_label_names(names)
        self._parts = [tag_parts(name, self.tag_scheme) for name in names]
        self.types = sorted({kind for _, kind in self._parts if kind})

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        if self.label_names is None:
            raise ValueError("span_f1 needs the tag names; the model must call set_label_names (see Model.use_label_names)")
        gold_labels = gold_labels.detach()
        predicted = predicted_classes(predictions, gold_labels).cpu()
        gold_labels = gold_labels.cpu()
        keep = torch.ones_like(gold_labels, dtype=torch.bool) if mask is None else mask.detach().cpu().bool()
        position = {kind: i for i, kind in enumerate(self.types)}
        counts = torch.zeros(3, len(self.types), dtype=torch.float64)
        for row_predicted, row_gold, row_keep in zip(predicted, gold_labels, keep):
            found = spans([self._parts[i] for i in row_predicted[row_keep].tolist()])
            expected = spans([self._parts[i] for i in row_gold[row_keep].tolist()])
            for row, chunks in enumerate((found & expected, found, expected)):
                for kind, _, _ in chunks:
                    counts[row, position[kind]] += 1
        self.accumulate(true_positive=counts[0], predicted=counts[1], gold=counts[2])

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        width = len(self.types)
        empty = torch.zeros(width, dtype=torch.float64)
        true_positive, predicted, gold = (stats.get(name, empty).reshape(-1)[:width] for name in self.summed)
        result: dict[str, float] = {}
        precision, recall = ratio(true_positive, predicted), ratio(true_positive, gold)
        f1 = fbeta_score(true_positive, predicted, gold, 1.0)
        for i, kind in enumerate(self.types):
            result[f"{kind}_precision"], result[f"{kind}_recall"], result[f"{kind}_f1"] = (
                float(precision[i]), float(recall[i]), float(f1[i])
            )
        totals = [value.sum() for value in (true_positive, predicted, gold)]
        result["precision"] = float(ratio(totals[0], totals[1]))
        result["recall"] = float(ratio(totals[0], totals[2]))
        result["f1"] = float(fbeta_score(*totals, 1.0))
        return result
