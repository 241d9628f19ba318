"""A constituency tree from labelled spans, as AllenNLP's span parser builds it: keep each span whose best label is
not ``NO-LABEL`` (and the whole sentence, whatever its label), settle overlapping pairs greedily, then nest what
is left. Pure functions over probabilities, unit-testable without a model. (They build
:class:`distrain.zoo.structured_prediction.trees.Tree`, so they live beside the model, not in ``modules/``, which must not import data.)
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import torch

from distrain.zoo.structured_prediction.trees import Tree


class ScoredSpan(NamedTuple):
    """A kept span: ``end`` exclusive; its best label's probability and index, and ``NO-LABEL``'s probability."""

    start: int
    end: int
    label_prob: float
    no_label_prob: float
    label_index: int


def select_spans(probabilities: torch.Tensor, spans: torch.Tensor, length: int, no_label: int) -> list[ScoredSpan]:
    """The spans (inclusive ``(n, 2)``, scored ``(n, labels)``) whose best label is not ``no_label``, and the span of
    the whole sentence of ``length`` words."""
    best_probs, best = probabilities.max(-1)
    kept = []
    for (start, end), label_prob, label, scores in zip(spans.tolist(), best_probs.tolist(), best.tolist(),
                                                      probabilities):
        end += 1
        if label != no_label or (start == 0 and end == length):
            kept.append(ScoredSpan(start, end, float(label_prob), float(scores[no_label]), label))
    return kept


def resolve_overlaps(spans: list[ScoredSpan]) -> list[ScoredSpan]:
    """Drop one of each crossing pair until none crosses, first pairs first: the one whose labelling is less likely
    than its partner's (AllenNLP's ``resolve_overlap_conflicts_greedily``, with its scan order and ties)."""
    spans = list(spans)
    conflicts = True
    while conflicts:
        conflicts = False
        for first_index, first in enumerate(spans):
            for second_index in range(first_index + 1, len(spans)):
                second = spans[second_index]
                if (first.start < second.start < first.end < second.end
                        or second.start < first.start < second.end < first.end):
                    conflicts = True
                    if first.no_label_prob + second.label_prob < second.no_label_prob + first.label_prob:
                        spans.pop(second_index)
                    else:
                        spans.pop(first_index)
                    break
    return spans


def tree_from_spans(labels: dict[tuple[int, int], str], words: Sequence[str],
                    pos_tags: Sequence[str] | None = None) -> Tree:
    """Nest labelled ``(start, end)`` spans (end exclusive) into a tree over ``words``: a label ``S-VP`` is ``S``
    over ``VP``; each split puts the longest labelled span that starts a node on its left. Words sit under their
    POS tags (``XX`` without them); a labelled word without POS tags is the label over the word itself."""

    def assemble(start: int, end: int) -> list[Tree]:
        chain = labels[(start, end)].split("-") if (start, end) in labels else None
        if end - start == 1:
            word = words[start]
            node = Tree(pos_tags[start] if pos_tags is not None else "XX", [word])
            if chain is not None:
                node = Tree(chain.pop(), [node] if pos_tags is not None else [word])
                while chain:
                    node = Tree(chain.pop(), [node])
            return [node]
        split = next((point for point in range(end - 1, start, -1) if (start, point) in labels), start + 1)
        children = assemble(start, split) + assemble(split, end)
        while chain:
            children = [Tree(chain.pop(), children)]
        return children

    return assemble(0, len(words))[0]
