"""The CoNLL-2005 shared task's semantic-role scores (``srl-eval.pl``, which AllenNLP ran as a subprocess), computed
here with the script's own arithmetic: per predicate, arguments are compared as spans, precision, recall and F1 per
argument type and overall.

What the script does, and so this metric: BIO tags are first written in the CoNLL bracket form as AllenNLP writes
them (a span opens at ``B-`` or where the type changes); a ``C-X`` phrase continues the latest ``X`` argument of the
predicate (one discontinuous argument, right only when every piece is), or is an ``X`` argument when none came
before; a predicted argument is correct when a gold one has the same first and last word, the same type and, if
discontinuous, the same pieces; a predicted one that is not is ``excess`` of its type, a gold one left over is
``missed``. ``V`` (the predicate itself) is left out of the scores.

Counts are kept per argument type (the types the tag vocabulary names) and summed over workers, so every
worker's share gives the one-process scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import torch

from distrain.metrics.metric import Metric


def conll_brackets(tags: Sequence[str]) -> list[str]:
    """BIO tags in the CoNLL bracket form, as AllenNLP's ``convert_bio_tags_to_conll_format``: ``(X*`` opens, ``*)``
    closes, ``(X*)`` is a one-word span; a span also opens (or closes) where the type changes, so ill-formed BIO
    (``O I-X``) still brackets."""
    brackets = []
    last = len(tags) - 1
    for i, tag in enumerate(tags):
        if tag == "O":
            brackets.append("*")
            continue
        opens = tag[0] == "B" or i == 0 or tag[1:] != tags[i - 1][1:]
        closes = i == last or tags[i + 1][0] == "B" or tag[1:] != tags[i + 1][1:]
        brackets.append(("(" + tag[2:] if opens else "") + "*" + (")" if closes else ""))
    return brackets


@dataclass
class Argument:
    """One argument: its type, first and last word, and its pieces if discontinuous (empty if not)."""

    type: str
    start: int
    end: int
    pieces: list[tuple[int, int]] = field(default_factory=list)


def arguments(tags: Sequence[str]) -> list[Argument]:
    """The predicate's arguments from its BIO tags, continuation phrases (``C-X``) joined to their ``X``."""
    phrases, opened = [], None
    for position, bracket in enumerate(conll_brackets(tags)):
        if bracket.startswith("("):
            opened = (bracket[1:bracket.index("*")], position)
        if bracket.endswith(")") and opened is not None:
            phrases.append((opened[0], opened[1], position))
            opened = None
    found: list[Argument] = []
    latest: dict[str, Argument] = {}
    for kind, start, end in phrases:
        if kind.startswith("C-") and kind[2:] in latest:
            head = latest[kind[2:]]
            if not head.pieces:
                head.pieces.append((head.start, head.end))
            head.pieces.append((start, end))
            head.end = end
            continue
        argument = Argument(kind[2:] if kind.startswith("C-") else kind, start, end)
        found.append(argument)
        latest[argument.type] = argument
    return found


def compare(gold: list[Argument], predicted: list[Argument]) -> tuple[list[str], list[str], list[str]]:
    """The types of the correct, excess and missed arguments of one predicate (``discriminate_args``)."""
    by_span = {(argument.start, argument.end): argument for argument in gold}
    correct, excess = [], []
    for argument in predicted:
        match = by_span.get((argument.start, argument.end))
        if (match is not None and match.type == argument.type
                and sorted(match.pieces) == sorted(argument.pieces)):
            correct.append(argument.type)
            del by_span[(argument.start, argument.end)]
        else:
            excess.append(argument.type)
    return correct, excess, [argument.type for argument in by_span.values()]


def precision_recall_f1(correct: float, excess: float, missed: float) -> tuple[float, float, float]:
    """srl-eval.pl's ``precrecf1`` as fractions (it prints percentages): 0 where nothing was predicted or expected."""
    precision = correct / (correct + excess) if correct + excess > 0 else 0.0
    recall = correct / (correct + missed) if correct + missed > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, f1


def argument_type(label: str) -> str | None:
    """The argument type a BIO label scores under (``B-C-ARG1`` → ``ARG1``); None for ``O``."""
    if label == "O":
        return None
    kind = label[2:]
    return kind[2:] if kind.startswith("C-") else kind


@Metric.register("srl_eval")
class SrlEvalScorer(Metric):
    """Per-type and overall span precision, recall and F1 of predicate arguments, as srl-eval.pl scores them.

    Called with each predicate's predicted and gold BIO tags (word level) and the predicate's position (None: a
    sentence without a predicate, which scores nothing). Needs the tag names: the model passes its tag
    vocabulary. Results by AllenNLP's names: ``precision-ARG0``, ``recall-ARG0``, ``f1-measure-ARG0`` for each
    type seen and ``…-overall``; ``ignore_classes`` (``V``) are left out of both.
    """

    summed = ("correct", "excess", "missed")

    def __init__(self, ignore_classes: Sequence[str] = ("V",)) -> None:
        super().__init__()
        self.ignore_classes = set(ignore_classes)
        self.types: list[str] = []

    def set_label_names(self, names: Sequence[str]) -> None:
        super().set_label_names(names)
        self.types = sorted({kind for kind in map(argument_type, names) if kind is not None})
        if "overall" in self.types:
            raise ValueError("'overall' cannot be an argument type: it names the scores over all types")

    def __call__(self, predicted_tags: Sequence[Sequence[str]], gold_tags: Sequence[Sequence[str]],  # type: ignore[override]
                 verb_indices: Sequence[int | None]) -> None:
        if self.label_names is None:
            raise ValueError("srl_eval needs the tag names; the model must call set_label_names (see Model.use_label_names)")
        position = {kind: i for i, kind in enumerate(self.types)}
        counts = torch.zeros(3, len(self.types), dtype=torch.float64)
        for predicted, gold, verb_index in zip(predicted_tags, gold_tags, verb_indices):
            if verb_index is None:
                continue
            for row, kinds in enumerate(compare(arguments(gold), arguments(predicted))):
                for kind in kinds:
                    if kind not in position:
                        raise ValueError(f"argument type {kind!r} is not among the tag vocabulary's "
                                         f"({', '.join(self.types)})")
                    counts[row, position[kind]] += 1
        self.accumulate(correct=counts[0], excess=counts[1], missed=counts[2])

    def counts(self, stats: dict[str, torch.Tensor]) -> dict[str, tuple[int, int, int]]:
        """``type -> (correct, excess, missed)`` for each type seen, ignored ones included."""
        width = len(self.types)
        empty = torch.zeros(width, dtype=torch.float64)
        columns = [stats.get(name, empty).reshape(-1)[:width].tolist() for name in self.summed]
        return {kind: tuple(int(column[i]) for column in columns)  # type: ignore[misc]
                for i, kind in enumerate(self.types) if any(column[i] for column in columns)}

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        result: dict[str, float] = {}
        totals = [0, 0, 0]
        for kind, kind_counts in self.counts(stats).items():
            if kind in self.ignore_classes:
                continue
            totals = [total + count for total, count in zip(totals, kind_counts)]
            values = precision_recall_f1(*kind_counts)
            result.update({f"{name}-{kind}": value for name, value in zip(("precision", "recall", "f1-measure"), values)})
        values = precision_recall_f1(*totals)
        result.update({f"{name}-overall": value for name, value in zip(("precision", "recall", "f1-measure"), values)})
        return result
