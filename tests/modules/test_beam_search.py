"""AllenNLP's beam search, without a model: on AllenNLP's own test chain (tokens 1-4 lead on to the end token 5 with
certainty, so each first token fixes a sequence) it finds AllenNLP's top sequences and log-probabilities, reorders
the state with the beams, decodes greedily at ``beam_size: 1`` and honours ``min_steps``."""

from __future__ import annotations

import math

import pytest
import torch

from distrain.modules.beam_search import BeamSearch

END = 5
#: allennlp/tests/nn/beam_search_test.py's transition probabilities (row: the last token, 0 the start)
TRANSITIONS = torch.tensor([[0.0, 0.4, 0.3, 0.2, 0.1, 0.0],
                            [0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
                            [0.0, 0.0, 0.0, 1.0, 0.0, 0.0],
                            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
                            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
                            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])


def chain_step(last: torch.Tensor, state: dict, step: int):
    """The next token's log-probabilities; the state keeps each beam's tokens so far, and (where asked) every new
    token must follow its beam's previous one, which a state the search failed to reorder would break."""
    history = state["history"]
    if state["check"].all() and history.shape[1]:
        assert (TRANSITIONS[history[:, -1], last] > 0).all()
    return TRANSITIONS[last].log(), {**state, "history": torch.cat([history, last.unsqueeze(1)], dim=1)}


def search(beam_size: int, batch: int = 2, check: bool = True, **options):
    start = torch.zeros(batch, dtype=torch.long)
    state = {"history": start[:, None][:, :0], "check": torch.full((batch,), check)}
    return BeamSearch(end_index=END, beam_size=beam_size, **options).search(start, state, chain_step)


def test_beam_search_finds_allennlps_top_sequences_and_log_probabilities():
    predictions, scores = search(beam_size=3)
    expected = [[1, 2, 3, 4, 5], [2, 3, 4, 5, 5], [3, 4, 5, 5, 5]]
    for row in range(2):
        assert predictions[row].tolist() == expected
        assert scores[row].tolist() == pytest.approx([math.log(0.4), math.log(0.3), math.log(0.2)], abs=1e-6)


def test_beam_size_one_is_greedy_and_max_steps_cuts_the_sequences():
    predictions, scores = search(beam_size=1, max_steps=3)
    assert predictions.tolist() == [[[1, 2, 3]]] * 2
    assert scores[:, 0].tolist() == pytest.approx([math.log(0.4)] * 2, abs=1e-6)


def test_min_steps_keeps_the_end_token_back():
    """On the chain smoothed (no zero probabilities: AllenNLP, too, masks the end token with the lowest float, which
    still beats log 0) the end token, likeliest after token 4, comes only after ``min_steps`` tokens."""
    smoothed = (TRANSITIONS + 0.01) / (TRANSITIONS + 0.01).sum(1, keepdim=True)
    start = torch.zeros(2, dtype=torch.long)
    beam = BeamSearch(end_index=END, beam_size=2, min_steps=6, max_steps=7)
    predictions, _ = beam.search(start, {}, lambda last, state, step: (smoothed[last].log(), state))
    assert all(END not in row[:6] for beams in predictions.tolist() for row in beams)
    unbounded, _ = BeamSearch(end_index=END, beam_size=2, max_steps=7).search(
        start, {}, lambda last, state, step: (smoothed[last].log(), state))
    assert unbounded[0, 0].tolist()[:5] == [1, 2, 3, 4, END]
