"""SQuAD v1.1 exact match and token F1 (the official ``evaluate-v1.1.py`` semantics), summed per question.

Each call scores whole questions (a predicted string against its gold answers, the max over them), so the
statistics are three sums (EM, F1, questions) and sync exactly over any number of workers. That a question is
scored once is the reader's doing: ``transformer_squad`` keeps all windows of a question in one instance.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Sequence

import torch

from distrain.metrics.metric import Metric

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation, drop the articles a/an/the, collapse whitespace (the official order)."""
    text = "".join(character for character in text.lower() if character not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


@Metric.register("squad_em_and_f1")
class SquadEmAndF1(Metric):
    """``metric(best_span_strings, gold_answer_lists)``: one entry per question; reads ``{"em", "f1"}``.

    A question without gold answers is not scored (SQuAD v1.1 has none such)."""

    summed = ("em", "f1", "count")

    def __call__(self, predictions: Sequence[str], gold_answers: Sequence[Sequence[str]]) -> None:  # type: ignore[override]
        em = f1 = count = 0.0
        for prediction, golds in zip(predictions, gold_answers, strict=True):
            if not golds:
                continue
            em += max(exact_match(prediction, gold) for gold in golds)
            f1 += max(token_f1(prediction, gold) for gold in golds)
            count += 1
        # float64 from the start: a Python float would become a float32 tensor first
        as_double = lambda value: torch.tensor(value, dtype=torch.float64)  # noqa: E731
        self.accumulate(em=as_double(em), f1=as_double(f1), count=as_double(count))

    def compute(self, stats) -> dict[str, float]:
        count = float(stats.get("count", 0.0))
        if count == 0:
            return {"em": 0.0, "f1": 0.0}
        return {"em": float(stats["em"]) / count, "f1": float(stats["f1"]) / count}
