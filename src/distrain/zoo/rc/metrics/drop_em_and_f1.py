"""DROP's exact match and F1 (the official evaluator's semantics, AllenNLP's ``drop`` metric), summed per question.

An answer is a bag of spans. Each span is normalized word by word (words split at spaces and hyphens; lowercased;
punctuation dropped unless the word is a number; numbers written as floats, "2" as "2.0"; articles dropped). Exact
match: the same set of normalized spans, as many. F1: the predicted and gold spans are paired one to one to maximise
the summed per-span F1 of their word sets (a pair whose gold span holds numbers none of which the predicted span
holds scores 0), and the per-gold scores, padded with zeros to the larger side, are averaged and rounded to two
decimals. A question scores the best (EM, then F1) over its annotations; the statistics are three sums, so they
sync exactly over any number of workers.
"""

from __future__ import annotations

import re
import string
from typing import Any, Sequence

import numpy as np
import torch

from distrain.metrics.assignment import best_assignment
from distrain.metrics.metric import Metric

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _normalize_word(word: str) -> str:
    word = word.lower()
    if not _is_number(word):
        word = "".join(character for character in word if character not in _PUNCTUATION)
    if _is_number(word):  # "1,000" is one once its comma is gone
        word = str(float(word))
    return " ".join(_ARTICLES.sub(" ", word).split())


def normalize_answer(text: str) -> str:
    """One span as the evaluator compares it."""
    return " ".join(part for part in map(_normalize_word, re.split(" |-", text)) if part.strip()).strip()


def _bags(answer: str | Sequence[str]) -> tuple[list[str], list[set[str]]]:
    spans = [answer] if isinstance(answer, str) else list(answer)
    normalized = [normalize_answer(span) for span in spans]
    return normalized, [set(span.split()) for span in normalized]


def _bag_f1(predicted: set[str], gold: set[str]) -> float:
    common = len(gold & predicted)
    precision = common / len(predicted) if predicted else 1.0
    recall = common / len(gold) if gold else 1.0
    return 0.0 if precision == 0.0 and recall == 0.0 else 2 * precision * recall / (precision + recall)


def _numbers_agree(gold: set[str], predicted: set[str]) -> bool:
    """No number in the gold span, or one the predicted span holds too."""
    gold_numbers = {word for word in gold if _is_number(word)}
    return not gold_numbers or bool(gold_numbers & {word for word in predicted if _is_number(word)})


def drop_em_and_f1(predicted: str | Sequence[str], gold: str | Sequence[str]) -> tuple[float, float]:
    """EM and F1 of one prediction (a span or several) against one gold answer (the same)."""
    predicted_spans, predicted_bags = _bags(predicted)
    gold_spans, gold_bags = _bags(gold)
    exact = float(set(predicted_spans) == set(gold_spans) and len(predicted_spans) == len(gold_spans))
    scores = np.zeros((len(gold_bags), len(predicted_bags)))
    for g, gold_bag in enumerate(gold_bags):
        for p, predicted_bag in enumerate(predicted_bags):
            if _numbers_agree(gold_bag, predicted_bag):
                scores[g, p] = _bag_f1(predicted_bag, gold_bag)
    per_gold = np.zeros(max(len(gold_bags), len(predicted_bags)))
    for g, p in best_assignment(scores):
        per_gold[g] = max(per_gold[g], scores[g, p])
    return exact, float(np.round(np.mean(per_gold), 2))


def answer_strings(annotation: dict[str, Any]) -> tuple[str, ...]:
    """A DROP annotation as the evaluator's gold spans: the number, else the spans, else "day month year"."""
    if annotation.get("number"):
        return (str(annotation["number"]),)
    if annotation.get("spans"):
        return tuple(annotation["spans"])
    if "date" in annotation:
        date = annotation["date"]
        return (f"{date['day']} {date['month']} {date['year']}",)
    raise ValueError(f"a DROP answer has a number, spans or a date, not only {sorted(annotation)}")


@Metric.register("drop")
@Metric.register("drop_em_and_f1")
class DropEmAndF1(Metric):
    """``metric(prediction, annotations)``: one question's predicted answer (a string or a list of spans) and its
    DROP annotations (``{"number", "spans", "date"}`` each); reads ``{"em", "f1"}``."""

    summed = ("em", "f1", "count")

    def __call__(self, prediction: str | Sequence[str], ground_truths: Sequence[dict]) -> None:  # type: ignore[override]
        if not ground_truths:
            return  # nothing to score against (AllenNLP's models never ask)
        exact, f1 = max(drop_em_and_f1(prediction, answer_strings(annotation)) for annotation in ground_truths)
        as_double = lambda value: torch.tensor(value, dtype=torch.float64)  # noqa: E731
        self.accumulate(em=as_double(exact), f1=as_double(f1), count=as_double(1.0))

    def compute(self, stats) -> dict[str, float]:
        count = float(stats.get("count", 0.0))
        if count == 0:
            return {"em": 0.0, "f1": 0.0}
        return {"em": float(stats["em"]) / count, "f1": float(stats["f1"]) / count}
