"""The beam search's samplers, final scorer and n-gram blocking (AllenNLP's), on a random step function: the
default search is unchanged, sampled tokens stay where each sampler allows, and no kept sequence repeats an n-gram."""

from __future__ import annotations

import pytest
import torch

from distrain.config.errors import ConfigError
from distrain.modules.beam_constraints.repeated_ngram_blocking import RepeatedNGramBlockingConstraint
from distrain.modules.beam_samplers.deterministic import DeterministicSampler
from distrain.modules.beam_samplers.gumbel import GumbelSampler
from distrain.modules.beam_samplers.top_k import TopKSampler
from distrain.modules.beam_samplers.top_p import TopPSampler
from distrain.modules.beam_search import BeamSearch
from distrain.modules.sequence_scorers.length_normalized import LengthNormalizedSequenceLogProbabilityScorer

END = 7
TABLE = torch.log_softmax(torch.randn(8, 8, generator=torch.Generator().manual_seed(1)), dim=-1)


def step(last: torch.Tensor, state: dict):  # AllenNLP's older two-argument form
    return TABLE[last], state


def test_the_deterministic_sampler_is_the_default_search():
    start = torch.zeros(3, dtype=torch.long)
    plain = BeamSearch(END, max_steps=6, beam_size=3).search(start, {}, step)
    sampled = BeamSearch(END, max_steps=6, beam_size=3, sampler=DeterministicSampler()).search(start, {}, step)
    assert torch.equal(plain[0], sampled[0]) and torch.allclose(plain[1], sampled[1])
    with pytest.raises(ConfigError):
        BeamSearch(END, beam_size=9).search(start, {}, step)


def test_length_normalisation_divides_by_the_length_to_the_penalty():
    start = torch.zeros(1, dtype=torch.long)
    sequences, summed = BeamSearch(END, max_steps=6, beam_size=3).search(start, {}, step)
    scorer = LengthNormalizedSequenceLogProbabilityScorer(length_penalty=2.0)
    sequences_n, normalised = BeamSearch(END, max_steps=6, beam_size=3, final_sequence_scorer=scorer).search(
        start, {}, step)
    for row, score in zip(sequences_n[0].tolist(), normalised[0].tolist()):
        length = sum(token != END for token in row) + (row[-1] == END)
        original = summed[0][sequences[0].tolist().index(row)]
        assert score == pytest.approx(float(original) / length ** 2)


@pytest.mark.parametrize("size", [1, 2])
def test_ngram_blocking_keeps_no_repeated_ngram(size):
    constraint = RepeatedNGramBlockingConstraint(size)
    sequences, _ = BeamSearch(END, max_steps=8, beam_size=3, constraints=[constraint]).search(
        torch.zeros(2, dtype=torch.long), {}, step)
    for row in sequences.reshape(-1, sequences.shape[-1]).tolist():
        row = row[:row.index(END)] if END in row else row
        grams = [tuple(row[i:i + size]) for i in range(len(row) - size + 1)]
        assert len(grams) == len(set(grams)), row


def test_samplers_draw_only_where_allowed():
    torch.manual_seed(0)
    log_probs = torch.log(torch.tensor([[0.05, 0.5, 0.3, 0.1, 0.05, 0.0], [0.0, 0.0, 0.6, 0.3, 0.1, 0.0]]))
    for _ in range(20):
        _, classes, _ = TopKSampler(k=2, with_replacement=True).sample_nodes(log_probs, 2, {})
        assert set(classes[0].tolist()) <= {1, 2} and set(classes[1].tolist()) <= {2, 3}
        _, classes, _ = TopPSampler(p=0.75, with_replacement=True).sample_nodes(log_probs, 2, {})
        assert set(classes[0].tolist()) <= {1, 2} and set(classes[1].tolist()) <= {2, 3}
    with pytest.raises(ValueError):
        TopPSampler(p=1.5)
    with pytest.raises(ValueError):
        TopKSampler(k=1).sample_nodes(log_probs, 2, {})
    sequences, scores = BeamSearch(END, max_steps=6, beam_size=3, sampler=GumbelSampler()).search(
        torch.zeros(4, dtype=torch.long), {}, step)
    assert (scores[:, :-1] >= scores[:, 1:]).all()
    for row in sequences.reshape(-1, sequences.shape[-1]).tolist():
        assert row[row.index(END):] == [END] * (len(row) - row.index(END)) if END in row else True
