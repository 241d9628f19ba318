"""AllenNLP's ``rouge``: ROUGE-1 .. ROUGE-N recall, precision and F1, and ROUGE-L F1 (Lin 2004), of predicted
token ids against one reference each.

AllenNLP's ROUGE is a mean over sequences of each sequence's scores (a sequence with no match scores 0), so the
statistics are the sums of those scores and the number of sequences, summed over workers. Excluded ids (start,
end, padding) never match: n-grams holding one are left out, and the longest common subsequence is that of the
sequences without them (AllenNLP skipped them on one side only, where the other side's could not match anyway).
"""

from __future__ import annotations

from typing import Sequence

import torch

from distrain.config.constraints import PositiveInt
from distrain.zoo.seq2seq.metrics.bleu import as_rows, ngram_counts, valid_ids
from distrain.metrics.metric import Metric


def longest_common_subsequence(first: Sequence[int], second: Sequence[int]) -> int:
    previous = [0] * (len(second) + 1)
    for token in first:
        current = [0]
        for position, other in enumerate(second):
            current.append(previous[position] + 1 if token == other else max(current[-1], previous[position + 1]))
        previous = current
    return previous[-1]


def f1(recall: float, precision: float) -> float:
    return 2.0 * recall * precision / (recall + precision)


@Metric.register("rouge")
class Rouge(Metric):
    """``metric(predictions (batch, length), gold_targets (batch, length))``; reads AllenNLP's keys
    ``ROUGE-n_R``, ``ROUGE-n_P``, ``ROUGE-n_F1`` (n = 1 .. ``ngram_size``) and ``ROUGE-L``."""

    summed = ("recalls", "precisions", "f1s", "rouge_l", "sequences")

    def __init__(self, ngram_size: PositiveInt = 2, exclude_indices: set[int] | None = None) -> None:
        super().__init__()
        self.ngram_size = ngram_size
        self.exclude_indices = set(exclude_indices or ())

    def __call__(self, predictions: torch.Tensor, gold_targets: torch.Tensor,  # type: ignore[override]
                 mask: torch.Tensor | None = None) -> None:
        if mask is not None:
            raise NotImplementedError("rouge does not take a mask")
        sums = torch.zeros(3, self.ngram_size, dtype=torch.float64)  # recall, precision, F1 per n
        rouge_l = 0.0
        rows = list(zip(as_rows(predictions), as_rows(gold_targets)))
        for predicted, reference in rows:
            for n in range(1, self.ngram_size + 1):
                mine = ngram_counts(predicted, n, self.exclude_indices)
                theirs = ngram_counts(reference, n, self.exclude_indices)
                matches = sum(min(mine[gram], count) for gram, count in theirs.items())
                if matches:
                    recall, precision = matches / sum(theirs.values()), matches / sum(mine.values())
                    sums[:, n - 1] += torch.tensor([recall, precision, f1(recall, precision)], dtype=torch.float64)
            predicted, reference = valid_ids(predicted, self.exclude_indices), valid_ids(reference, self.exclude_indices)
            common = longest_common_subsequence(reference, predicted)
            if common:
                rouge_l += f1(common / len(reference), common / len(predicted))
        self.accumulate(recalls=sums[0], precisions=sums[1], f1s=sums[2],  # float64 tensors: a Python float would
                        rouge_l=torch.tensor(rouge_l, dtype=torch.float64),  # pass through float32
                        sequences=torch.tensor(len(rows), dtype=torch.float64))

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        sequences = float(stats.get("sequences", 0.0))
        mean = lambda total: float(total) / sequences if sequences else 0.0  # noqa: E731
        values = {}
        for key, name in (("R", "recalls"), ("P", "precisions"), ("F1", "f1s")):
            sums = stats.get(name, torch.zeros(0, dtype=torch.float64)).reshape(-1)
            for n in range(1, self.ngram_size + 1):
                values[f"ROUGE-{n}_{key}"] = mean(sums[n - 1]) if n <= sums.numel() else 0.0
        values["ROUGE-L"] = mean(stats.get("rouge_l", 0.0))
        return values
