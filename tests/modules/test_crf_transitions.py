"""The CRF's transition rules in full (every allowed pair of a small tag set, START and END included), the start and
end scores' part in decoding, and what its state holds (test_conditional_random_field.py has the brute-force
likelihood and decoding)."""

from __future__ import annotations

import pytest
import torch

from distrain.zoo.tagging.modules.conditional_random_field import (ConditionalRandomField, allowed_transitions,
                                                                  is_transition_allowed)

BIO = ["O", "B-X", "I-X"]  # then START (3) and END (4)


def test_every_allowed_bio_pair_start_and_end_included():
    assert allowed_transitions("BIO", BIO) == [(0, 0), (0, 1), (0, 4), (1, 0), (1, 1), (1, 2), (1, 4),
                                               (2, 0), (2, 1), (2, 2), (2, 4), (3, 0), (3, 1)]


def test_every_allowed_bioul_pair_start_and_end_included():
    labels = ["O", "B-X", "I-X", "L-X", "U-X"]  # START 5, END 6
    assert allowed_transitions("BIOUL", labels) == [
        (0, 0), (0, 1), (0, 4), (0, 6), (1, 2), (1, 3), (2, 2), (2, 3), (3, 0), (3, 1), (3, 4), (3, 6),
        (4, 0), (4, 1), (4, 4), (4, 6), (5, 0), (5, 1), (5, 4)]


def test_nothing_follows_end_nothing_precedes_start_and_an_unknown_encoding_is_named():
    for encoding in ("BIO", "BIOUL", "IOB1", "BMES"):
        assert not is_transition_allowed(encoding, "END", "", "O", "")
        assert not is_transition_allowed(encoding, "O", "", "START", "")
        assert not is_transition_allowed(encoding, "START", "", "END", "")
    with pytest.raises(ValueError, match=r"^unknown label encoding 'XYZ'; expected one of BIO, BIOUL, IOB1, BMES$"):
        is_transition_allowed("XYZ", "O", "", "B", "X")


def fixed(crf: ConditionalRandomField, start=None, end=None) -> ConditionalRandomField:
    with torch.no_grad():
        crf.transitions.zero_()
        if start is not None:
            crf.start_transitions.copy_(torch.tensor(start))
            crf.end_transitions.copy_(torch.tensor(end))
    return crf


def test_start_and_end_scores_pick_the_first_and_last_tags_and_count_in_the_score():
    crf = fixed(ConditionalRandomField(2), start=[3.0, 0.0], end=[0.0, 2.0])
    assert ConditionalRandomField(2).include_start_end_transitions
    (path, score), = crf.viterbi_tags(torch.zeros(1, 3, 2), torch.ones(1, 3, dtype=torch.bool))
    assert (path[0], path[-1]) == (0, 1)
    assert score == pytest.approx(5.0)
    plain = fixed(ConditionalRandomField(2, include_start_end_transitions=False))
    logits = torch.tensor([[[0.0, 1.0], [2.0, 0.0]]])
    assert plain.viterbi_tags(logits, torch.ones(1, 2, dtype=torch.bool)) == [([1, 0], 3.0)]
    assert not hasattr(plain, "start_transitions")


def test_a_constrained_decoding_scores_its_path_as_the_plain_scores_do_and_may_end_on_any_allowed_tag():
    crf = fixed(ConditionalRandomField(3, allowed_transitions("BIO", BIO)), start=[0.0, 0.0, 0.0], end=[0.0, 0.0, 0.0])
    logits = torch.tensor([[[0.0, 4.0, 0.0], [0.0, 0.0, 4.0], [4.0, 0.0, 0.0]]])  # B-X I-X O
    assert crf.viterbi_tags(logits, torch.ones(1, 3, dtype=torch.bool)) == [([1, 2, 0], 12.0)]
    illegal = torch.tensor([[[5.0, 0.0, 0.0], [0.0, -1.0, 4.0]]])  # O then I-X is not allowed: O O (5) wins
    assert crf.viterbi_tags(illegal, torch.ones(1, 2, dtype=torch.bool)) == [([0, 0], 5.0)]


def test_the_constraints_are_not_part_of_the_saved_state():
    crf = ConditionalRandomField(3, allowed_transitions("BIO", BIO))
    assert sorted(crf.state_dict()) == ["end_transitions", "start_transitions", "transitions"]
