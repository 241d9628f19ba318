"""AllenNLP's ``bleu``: corpus BLEU of predicted token ids against one reference each (Papineni et al. 2002).

The statistics are the clipped n-gram matches and the predicted n-grams per order, and the predicted and
reference lengths: counts, summed over workers, so any split of the data gives the one-process score. (AllenNLP
2.10.1 divided its all-reduced counts by the world size, which changes nothing in one process.)
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

import torch

from distrain.metrics.metric import Metric


def valid_ids(row: torch.Tensor | Sequence[int], exclude: set[int]) -> list[int]:
    return [int(token) for token in row if int(token) not in exclude]


def ngram_counts(row: Sequence[int], size: int, exclude: set[int]) -> Counter:
    """The ``size``-grams of ``row``, leaving out any that holds an excluded id (start, end, padding): an n-gram
    never spans one, as in AllenNLP's ``ngrams``."""
    counts: Counter = Counter()
    for start in range(len(row) - size + 1):
        gram = tuple(row[start:start + size])
        if not any(token in exclude for token in gram):
            counts[gram] += 1
    return counts


def as_rows(values: torch.Tensor) -> list[list[int]]:
    return values.detach().cpu().tolist()


@Metric.register("bleu")
class Bleu(Metric):
    """``metric(predictions (batch, length), gold_targets (batch, length))`` of token ids; reads ``{"BLEU": ...}``."""

    summed = ("matches", "totals", "prediction_lengths", "reference_lengths")

    def __init__(self, ngram_weights: Iterable[float] = (0.25, 0.25, 0.25, 0.25),
                 exclude_indices: set[int] | None = None) -> None:
        super().__init__()
        self.ngram_weights = tuple(ngram_weights)
        self.exclude_indices = set(exclude_indices or ())

    def __call__(self, predictions: torch.Tensor, gold_targets: torch.Tensor,  # type: ignore[override]
                 mask: torch.Tensor | None = None) -> None:
        if mask is not None:
            raise NotImplementedError("bleu does not take a mask")
        orders = len(self.ngram_weights)
        matches, totals = [0.0] * orders, [0.0] * orders
        predicted_length = reference_length = 0
        for predicted, reference in zip(as_rows(predictions), as_rows(gold_targets)):
            for order in range(orders):
                mine = ngram_counts(predicted, order + 1, self.exclude_indices)
                theirs = ngram_counts(reference, order + 1, self.exclude_indices)
                matches[order] += sum(min(count, theirs[gram]) for gram, count in mine.items())
                totals[order] += sum(mine.values())
            predicted_length += len(valid_ids(predicted, self.exclude_indices))
            reference_length += len(valid_ids(reference, self.exclude_indices))
        self.accumulate(matches=torch.tensor(matches, dtype=torch.float64),
                        totals=torch.tensor(totals, dtype=torch.float64),
                        prediction_lengths=torch.tensor(predicted_length, dtype=torch.float64),
                        reference_lengths=torch.tensor(reference_length, dtype=torch.float64))

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        orders = len(self.ngram_weights)
        zeros = torch.zeros(orders, dtype=torch.float64)
        matches = _padded(stats.get("matches", zeros), orders)
        totals = _padded(stats.get("totals", zeros), orders)
        predicted = float(stats.get("prediction_lengths", 0.0))
        reference = float(stats.get("reference_lengths", 0.0))
        if predicted > reference:
            brevity = 1.0
        elif reference == 0 or predicted == 0:
            brevity = 0.0
        else:
            brevity = math.exp(1.0 - reference / predicted)
        log_precision = sum(weight * (math.log(float(matches[n]) + 1e-13) - math.log(float(totals[n]) + 1e-13))
                            for n, weight in enumerate(self.ngram_weights))
        return {"BLEU": brevity * math.exp(log_precision)}


def _padded(vector: torch.Tensor, size: int) -> torch.Tensor:
    """A summed vector at its declared length (a worker that saw nothing holds an empty one)."""
    return torch.cat([vector.reshape(-1), torch.zeros(max(0, size - vector.numel()), dtype=torch.float64)])[:size]
