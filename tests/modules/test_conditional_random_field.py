"""The CRF's pure parts against brute force: its log-likelihood is the gold score minus the log of the sum
over every tag sequence, Viterbi finds the best sequence, and constrained decoding never emits an illegal
transition of the span encoding."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from distrain.zoo.tagging.modules.conditional_random_field import ConditionalRandomField, allowed_transitions

BIOUL = ["O", "B-PER", "I-PER", "L-PER", "U-PER", "B-LOC", "I-LOC", "L-LOC", "U-LOC"]


def sequence_score(crf: ConditionalRandomField, logits: torch.Tensor, tags: list[int]) -> torch.Tensor:
    """The unnormalised score of one tag sequence, written out term by term."""
    score = sum(logits[t, tag] for t, tag in enumerate(tags))
    score = score + sum(crf.transitions.detach()[a, b] for a, b in zip(tags, tags[1:]))
    if crf.include_start_end_transitions:
        score = score + crf.start_transitions.detach()[tags[0]] + crf.end_transitions.detach()[tags[-1]]
    return score


@pytest.mark.parametrize("start_end", [True, False])
def test_log_likelihood_equals_brute_force_over_all_tag_sequences(start_end):
    torch.manual_seed(0)
    crf = ConditionalRandomField(3, include_start_end_transitions=start_end).double()
    logits = torch.randn(3, 4, 3, dtype=torch.float64)
    lengths = [4, 2, 1]
    mask = torch.tensor([[t < n for t in range(4)] for n in lengths])
    tags = torch.tensor([[0, 2, 1, 1], [2, 2, -100, -100], [1, -100, -100, -100]])
    got = crf(logits, tags, mask).detach()
    for b, n in enumerate(lengths):
        every = torch.stack([sequence_score(crf, logits[b], list(s)) for s in itertools.product(range(3), repeat=n)])
        expected = sequence_score(crf, logits[b], tags[b, :n].tolist()) - torch.logsumexp(every, 0)
        assert float(got[b]) == pytest.approx(float(expected), abs=1e-9)


def test_viterbi_finds_the_best_sequence_by_brute_force():
    torch.manual_seed(1)
    crf = ConditionalRandomField(3).double()
    logits = torch.randn(2, 5, 3, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]]).bool()
    for b, (path, score) in enumerate(crf.viterbi_tags(logits, mask)):
        n = int(mask[b].sum())
        best = max(itertools.product(range(3), repeat=n), key=lambda s: float(sequence_score(crf, logits[b], list(s))))
        assert path == list(best)
        assert score == pytest.approx(float(sequence_score(crf, logits[b], path)))


def legal_bioul(tags: list[str]) -> bool:
    """BIOUL written out as a reader would check it: spans are U, or B I* L of one type."""
    open_kind = None
    for tag in tags:
        prefix, _, kind = tag.partition("-")
        if open_kind is None:
            if prefix in ("I", "L"):
                return False
            if prefix == "B":
                open_kind = kind
        else:
            if prefix not in ("I", "L") or kind != open_kind:
                return False
            if prefix == "L":
                open_kind = None
    return open_kind is None


def test_constrained_decoding_never_emits_an_illegal_bioul_sequence():
    """Property test: random emissions and transitions (scaled so that illegal paths often score best
    unconstrained), random lengths; every decoded sequence is legal BIOUL."""
    rng = random.Random(7)
    torch.manual_seed(7)
    constrained = ConditionalRandomField(len(BIOUL), allowed_transitions("BIOUL", BIOUL))
    free = ConditionalRandomField(len(BIOUL))
    illegal_unconstrained = 0
    for _ in range(200):
        batch, length = rng.randint(1, 4), rng.randint(1, 7)
        logits = torch.randn(batch, length, len(BIOUL)) * rng.choice([0.5, 3.0, 10.0])
        mask = torch.zeros(batch, length, dtype=torch.bool)
        for b in range(batch):
            mask[b, : rng.randint(1, length)] = True
        with torch.no_grad():
            constrained.transitions.normal_(0, 2)
            free.transitions.copy_(constrained.transitions)
        for path, _ in constrained.viterbi_tags(logits, mask):
            assert legal_bioul([BIOUL[i] for i in path]), [BIOUL[i] for i in path]
        illegal_unconstrained += sum(not legal_bioul([BIOUL[i] for i in p]) for p, _ in free.viterbi_tags(logits, mask))
    assert illegal_unconstrained > 50  # the property is not vacuous: without constraints it fails often


@pytest.mark.parametrize("encoding,labels,legal,illegal", [
    ("BIO", ["O", "B-X", "I-X", "I-Y"], [("B-X", "I-X"), ("O", "B-X"), ("I-X", "O")], [("O", "I-X"), ("B-X", "I-Y")]),
    ("IOB1", ["O", "B-X", "I-X"], [("I-X", "B-X"), ("O", "I-X")], [("O", "B-X")]),
    ("BMES", ["B-X", "M-X", "E-X", "S-X"], [("B-X", "M-X"), ("E-X", "S-X")], [("S-X", "M-X"), ("B-X", "S-X")]),
])
def test_allowed_transitions_per_encoding(encoding, labels, legal, illegal):
    pairs = {(labels[i], labels[j]) for i, j in allowed_transitions(encoding, labels) if max(i, j) < len(labels)}
    assert set(legal) <= pairs and not set(illegal) & pairs
