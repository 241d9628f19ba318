"""The maximum spanning tree decoder gives AllenNLP 2.10.1's ``decode_mst`` trees and labels (ties included; the
golden file is made by tests/allennlp_oracle/parsing_outputs.py) and, where scores do not tie, the best tree found
by trying every head assignment."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from distrain.zoo.structured_prediction.modules.chu_liu_edmonds import decode_mst
from support.paths import TESTS

CASES = json.loads((TESTS / "allennlp_golden" / "parsing.json").read_text())["decode_mst"]


def test_decode_mst_gives_allennlps_heads_and_labels_ties_included():
    assert any(case["has_labels"] for case in CASES) and any(not case["has_labels"] for case in CASES)
    for number, case in enumerate(CASES):
        heads, labels = decode_mst(np.asarray(case["energy"]), case["length"], has_labels=case["has_labels"])
        assert heads.tolist() == case["heads"], number
        assert (labels.tolist() if labels is not None else None) == case["labels"], number


def _is_tree(heads: tuple[int, ...]) -> bool:
    for start in range(1, len(heads) + 1):
        seen, node = set(), start
        while node != 0:
            if node in seen:
                return False
            seen.add(node)
            node = heads[node - 1]
    return True


def test_decode_mst_finds_the_best_tree_of_all_head_assignments():
    rng = np.random.default_rng(3)
    for _ in range(20):
        words = int(rng.integers(1, 6))
        scores = rng.random((words + 1, words + 1))
        heads, _ = decode_mst(scores, words + 1, has_labels=False)
        trees = [tree for tree in itertools.product(range(words + 1), repeat=words)
                 if all(head != child for child, head in enumerate(tree, start=1)) and _is_tree(tree)]
        best = max(trees, key=lambda tree: sum(scores[head, child] for child, head in enumerate(tree, start=1)))
        assert heads.tolist() == [-1, *best]


def test_decode_mst_refuses_energy_of_the_wrong_rank():
    with pytest.raises(ValueError, match="expected 3"):
        decode_mst(np.zeros((3, 3)), 3, has_labels=True)
