"""Labelled bracketing precision, recall and F1 of constituency trees, with EVALB's arithmetic under its
``COLLINS.prm`` parameters (AllenNLP's ``evalb`` ran the EVALB program on each batch and summed the brackets of its
per-sentence lines).

What EVALB does with those parameters, and so this metric: words under a deleted POS label (``,`` ``:`` `````
``''`` ``.`` and ``-NONE-``) are dropped, and brackets are counted over the remaining words; each phrase bracket's
label is cut at its first ``-`` or ``=``; brackets covering no word, and brackets labelled ``TOP``, ``-NONE-`` or
a punctuation label, are left out; ``ADVP`` and ``PRT`` count as one label. Each gold bracket takes the first test
bracket not yet taken with the same first and last word and an equal label. A sentence whose two trees have
different words (after the deletions) scores nothing, as EVALB's error lines; so does one whose test tree keeps no
word (EVALB's skipped sentence).

Counts (matched, gold and test brackets) are summed over workers, so every worker's share gives the one-process
scores. Results by AllenNLP's names: ``evalb_precision``, ``evalb_recall``, ``evalb_f1_measure`` (precision is 0
where there is no gold bracket, as AllenNLP's).
"""

from __future__ import annotations

import re
from typing import Sequence

import torch

from distrain.zoo.structured_prediction.trees import Tree
from distrain.metrics.metric import Metric

#: COLLINS.prm's DELETE_LABEL lines
DELETED_LABELS = frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."})
#: COLLINS.prm's EQ_LABEL lines: labels that match each other
EQUAL_LABELS = (("ADVP", "PRT"),)
_CUT = re.compile(r"[-=]")


def _same_label(first: str, second: str) -> bool:
    return first == second or any({first, second} == {a, b} for a, b in EQUAL_LABELS)


def _parts(node: object) -> tuple[str, list]:
    """A node's label and children: distrain's :class:`Tree`, or nltk's (a list of its children with a
    ``label()`` method), which AllenNLP's parsers and their users hand the scorer."""
    if isinstance(node, Tree):
        return node.label, node.children
    return node.label(), list(node)  # type: ignore[attr-defined]


def brackets(tree: Tree) -> tuple[list[str], list[tuple[str, int, int]]]:
    """The tree's kept words and its phrase brackets ``(label, start, end)`` (end exclusive, over kept words), in
    EVALB's order (by where each opens), before any is left out."""
    words: list[str] = []
    found: list[tuple[str, int, int]] = []

    def visit(node: Tree) -> None:
        label, children = _parts(node)
        if len(children) == 1 and isinstance(children[0], str):  # a POS tag over its word
            if label not in DELETED_LABELS:
                words.append(children[0])
            return
        position = len(found)
        found.append((label, len(words), -1))
        for child in children:
            if isinstance(child, str):  # a word beside phrases: EVALB reads it as an error; here it counts as a word
                words.append(child)
            else:
                visit(child)
        found[position] = (label, found[position][1], len(words))

    visit(tree)
    return words, found


def _scored(found: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """The brackets EVALB counts: labels cut at ``-``/``=``, empty and deleted ones left out."""
    kept = []
    for label, start, end in found:
        if start == end:
            continue
        label = _CUT.split(label, maxsplit=1)[0]
        if not any(_same_label(label, deleted) for deleted in DELETED_LABELS):
            kept.append((label, start, end))
    return kept


def sentence_counts(gold: Tree, predicted: Tree) -> tuple[int, int, int]:
    """``(matched, gold, test)`` brackets of one sentence, as EVALB's line for it."""
    gold_words, gold_found = brackets(gold)
    test_words, test_found = brackets(predicted)
    if not test_words or gold_words != test_words:
        return 0, 0, 0
    gold_kept, test_kept = _scored(gold_found), _scored(test_found)
    taken = [False] * len(test_kept)
    matched = 0
    for label, start, end in gold_kept:
        for index, (other, other_start, other_end) in enumerate(test_kept):
            if not taken[index] and (start, end) == (other_start, other_end) and _same_label(label, other):
                taken[index] = True
                matched += 1
                break
    return matched, len(gold_kept), len(test_kept)


@Metric.register("evalb")
class EvalbBracketingScorer(Metric):
    """Labelled bracket precision, recall and F1 of predicted trees against gold ones (EVALB with COLLINS.prm).

    Called with lists of predicted and gold :class:`~distrain.zoo.structured_prediction.trees.Tree` (or nltk's
    trees). ``evalb_directory_path``, ``evalb_param_filename`` and ``evalb_num_errors_to_kill`` (AllenNLP's
    options for its external program) are accepted and unused: the arithmetic is here, and only ``COLLINS.prm``
    is known.
    """

    summed = ("matched", "gold", "predicted")

    def __init__(self, evalb_directory_path: str | None = None, evalb_param_filename: str = "COLLINS.prm",
                 evalb_num_errors_to_kill: int = 10) -> None:
        super().__init__()
        if evalb_param_filename != "COLLINS.prm":
            raise ValueError(f"only EVALB's COLLINS.prm is known, got {evalb_param_filename!r}")

    @staticmethod
    def compile_evalb(evalb_directory_path: str | None = None) -> None:
        """AllenNLP built its EVALB program with this before scoring; the arithmetic here needs no program, so
        code that calls it first (as AllenNLP's setup did) goes on to score as it did."""

    @staticmethod
    def clean_evalb(evalb_directory_path: str | None = None) -> None:
        """AllenNLP removed the built EVALB program with this; there is none to remove."""

    def __call__(self, predicted_trees: Sequence[Tree], gold_trees: Sequence[Tree]) -> None:  # type: ignore[override]
        if len(predicted_trees) != len(gold_trees):
            raise ValueError(f"{len(predicted_trees)} predicted trees for {len(gold_trees)} gold ones")
        totals = [0, 0, 0]
        for predicted, gold in zip(predicted_trees, gold_trees):
            totals = [total + count for total, count in zip(totals, sentence_counts(gold, predicted))]
        self.accumulate(matched=float(totals[0]), gold=float(totals[1]), predicted=float(totals[2]))

    def counts(self, stats: dict[str, torch.Tensor]) -> tuple[int, int, int]:
        """``(matched, gold, predicted)`` brackets, summed."""
        return tuple(int(stats[name]) if name in stats else 0 for name in self.summed)  # type: ignore[return-value]

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        matched, gold, predicted = self.counts(stats)
        recall = matched / gold if gold > 0 else 0.0
        precision = matched / predicted if gold > 0 and predicted > 0 else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        return {"evalb_recall": recall, "evalb_precision": precision, "evalb_f1_measure": f1}
