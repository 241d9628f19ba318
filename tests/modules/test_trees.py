"""Constituency trees read from brackets (distrain.zoo.structured_prediction.trees) and built from scored spans
(models/span_trees.py), each compared with the exact tree, span list or error (line and offset)."""

from __future__ import annotations

import pytest
import torch

from distrain.zoo.structured_prediction.models.span_trees import (ScoredSpan, resolve_overlaps, select_spans,
                                                                  tree_from_spans)
from distrain.zoo.structured_prediction.trees import Tree, TreeError, normalise, parse_tree, read_blocks, read_trees


def test_a_tree_reads_back_as_its_brackets_with_its_words_and_tags():
    text = "(S (NP (DT the) (NN dog)) (VP (VBD barked) (-LRB- \\()))"
    tree = parse_tree(text)
    assert str(tree) == text
    assert tree.label == "S" and [child.label for child in tree.children] == ["NP", "VP"]
    assert tree.leaves() == ["the", "dog", "barked", "\\("]
    assert tree.pos() == [("the", "DT"), ("dog", "NN"), ("barked", "VBD"), ("\\(", "-LRB-")]
    assert parse_tree("( (S (NN a)) )") == Tree("", [Tree("S", [Tree("NN", ["a"])])])
    assert parse_tree("(\n  S\n (NN a))") == Tree("S", [Tree("NN", ["a"])])


@pytest.mark.parametrize("text,message,offset", [
    ("(S (NN a)) (S (NN b))", "a second tree starts after the first ended", 11),
    ("(S (NN a)))", "a close bracket with no open one", 10),
    ("word (S (NN a))", "word 'word' outside any bracket", 0),
    ("(S (NN a)) tail", "word 'tail' outside any bracket", 11),
    ("(S (NP (NN a)  ", "2 bracket(s) left open", 13),
    ("   ", "no tree", 0),
])
def test_what_is_not_one_tree_is_named_with_its_offset(text, message, offset):
    with pytest.raises(TreeError) as error:
        parse_tree(text)
    assert (str(error.value), error.value.offset) == (message, offset)


def test_normalising_as_nltk_one_character_brackets_and_three_items():
    assert normalise("(S (X) (A B C))") == "(S (X X) (A B))"
    assert normalise("(S (NN a) (VP b))") == "(S (NN a) (VP b))"


def test_files_are_cut_into_blocks_at_unindented_brackets_and_a_bad_tree_names_its_line(tmp_path):
    path = tmp_path / "trees.txt"
    path.write_text("a preamble line\n(S (NN a)\n  (VB b))\n( (S (NN c)) )\n(X)\n")
    assert list(read_blocks(path)) == [(2, "(S (NN a)\n  (VB b))\n"), (4, "( (S (NN c)) )\n"), (5, "(X)\n")]
    assert [(line, str(tree)) for line, tree in read_trees(path)] == [
        (2, "(S (NN a) (VB b))"), (4, "(S (NN c))"), (5, "(X X)")]
    bad = tmp_path / "bad.txt"
    bad.write_text("(S (NN a))\n(S (NN a)\n  (VB b)\n  (VB c)\n")
    with pytest.raises(ValueError, match=f"^{bad}:4: 1 bracket\\(s\\) left open$"):
        list(read_trees(bad))
    two = tmp_path / "two.txt"
    two.write_text("( (S (NN a)) (S (NN b)) )\n")
    assert [str(tree) for _, tree in read_trees(two)] == ["( (S (NN a)) (S (NN b)))"]
    assert list(read_blocks(tmp_path / "two.txt"))[0][0] == 1


def test_the_kept_spans_are_those_labelled_and_the_whole_sentence():
    probabilities = torch.tensor([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.5, 0.2, 0.3], [0.2, 0.2, 0.6]])
    spans = torch.tensor([[0, 0], [1, 2], [0, 2], [2, 2]])  # inclusive ends; NO-LABEL is label 0
    assert select_spans(probabilities, spans, length=3, no_label=0) == [
        ScoredSpan(0, 1, pytest.approx(0.7), pytest.approx(0.1), 1),
        ScoredSpan(0, 3, pytest.approx(0.5), pytest.approx(0.5), 0),  # the whole sentence, though NO-LABEL is best
        ScoredSpan(2, 3, pytest.approx(0.6), pytest.approx(0.2), 2)]


def test_of_two_crossing_spans_the_less_likely_labelling_goes_the_first_on_a_tie():
    first, second = ScoredSpan(0, 2, 0.9, 0.1, 1), ScoredSpan(1, 3, 0.6, 0.3, 1)
    # keeping first costs 0.1 + 0.6 of probability, keeping second 0.3 + 0.9
    assert resolve_overlaps([first, second]) == [first]
    assert resolve_overlaps([second, first]) == [first]
    weaker = ScoredSpan(1, 3, 0.95, 0.05, 2)
    assert resolve_overlaps([first, weaker]) == [weaker]
    tie = ScoredSpan(1, 3, 0.9, 0.1, 2)
    assert resolve_overlaps([first, tie]) == [tie]
    nested, apart = ScoredSpan(0, 3, 0.5, 0.5, 1), ScoredSpan(3, 4, 0.5, 0.5, 1)
    assert resolve_overlaps([nested, first, apart]) == [nested, first, apart]  # nested or apart: no conflict
    chain = [ScoredSpan(0, 2, 0.9, 0.1, 1), ScoredSpan(1, 3, 0.2, 0.8, 1), ScoredSpan(2, 4, 0.9, 0.1, 1)]
    assert resolve_overlaps(chain) == [chain[0], chain[2]]


def test_spans_nest_into_a_tree_with_chains_and_pos_tags():
    words, tags = ["the", "dog", "barked"], ["DT", "NN", "VBD"]
    labels = {(0, 3): "S", (0, 2): "NP", (2, 3): "S-VP"}
    assert str(tree_from_spans(labels, words, tags)) == "(S (NP (DT the) (NN dog)) (S (VP (VBD barked))))"
    assert str(tree_from_spans(labels, words)) == "(S (NP (XX the) (XX dog)) (S (VP barked)))"
    flat = {(0, 3): "S-X", (1, 3): "VP"}
    assert str(tree_from_spans(flat, words, tags)) == "(S (X (DT the) (VP (NN dog) (VBD barked))))"
    longest = {(0, 4): "S", (0, 1): "A", (0, 3): "B"}  # the longest labelled span starting the node goes left
    assert str(tree_from_spans(longest, ["a", "b", "c", "d"])) == "(S (B (A a) (XX b) (XX c)) (XX d))"
