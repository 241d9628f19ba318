"""Each beam sampler's draws, sampler by sampler and without a search around them: the tokens each may draw (many
seeded draws), the log probabilities it hands back, with and without replacement, and its argument checks."""

from __future__ import annotations

import math

import pytest
import torch

from distrain.modules.beam_sampler import Sampler, draw, lowest, tempered
from distrain.modules.beam_samplers.multinomial import MultinomialSampler
from distrain.modules.beam_samplers.top_k import TopKSampler
from distrain.modules.beam_samplers.top_p import TopPSampler

#: two beams over five tokens; beam 0: 0.5, 0.3, 0.15, 0.04, 0.01
LOG_PROBS = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.04, 0.01], [0.01, 0.04, 0.15, 0.3, 0.5]]))


def drawn(sampler: Sampler, count: int, rounds: int = 300, log_probs: torch.Tensor = LOG_PROBS) -> list[set[int]]:
    """Each beam's tokens over ``rounds`` seeded draws; each draw's log probabilities are checked to be its tokens'."""
    torch.manual_seed(0)
    seen = [set() for _ in range(log_probs.size(0))]
    for _ in range(rounds):
        chosen, indices, state = sampler.sample_nodes(log_probs, count, {"kept": torch.ones(1)})
        assert indices.shape == (log_probs.size(0), count) and torch.equal(chosen, log_probs.gather(1, indices))
        assert list(state) == ["kept"]
        for beam, row in enumerate(indices.tolist()):
            if not getattr(sampler, "with_replacement", False):
                assert len(set(row)) == count, row
            seen[beam].update(row)
    return seen


def test_the_base_keeps_the_best_beams_tempers_and_draws():
    selected, indices, _ = Sampler().sample_beams(LOG_PROBS, 2, {})
    assert indices.tolist() == [[0, 1], [4, 3]] and torch.equal(selected, LOG_PROBS.gather(1, indices))
    assert tempered(LOG_PROBS, 1.0) is LOG_PROBS and torch.allclose(tempered(LOG_PROBS, 2.0), LOG_PROBS / 2)
    assert lowest(torch.zeros(1)) == torch.finfo(torch.float32).min
    torch.manual_seed(0)
    assert draw(torch.tensor([[0.0, 1.0, 0.0]]), 1, False).tolist() == [[1]]
    assert sorted(draw(torch.tensor([[0.0, 2.0, 2.0]]), 2, False)[0].tolist()) == [1, 2]
    assert draw(torch.tensor([[0.0, 1.0, 0.0]]), 3, True).tolist() == [[1, 1, 1]]


def test_multinomial_draws_from_every_token_and_a_sure_one_always():
    assert drawn(MultinomialSampler(), 2) == [set(range(5)), set(range(5))]
    sure = torch.log(torch.tensor([[1e-9, 1.0 - 2e-9, 1e-9]]))
    assert drawn(MultinomialSampler(with_replacement=True), 3, rounds=20, log_probs=sure) == [{1}]
    sampler = MultinomialSampler()
    assert (sampler.temperature, sampler.with_replacement) == (1.0, False)


def test_a_high_temperature_flattens_the_multinomial_and_a_low_one_sharpens_it():
    torch.manual_seed(0)
    counts = {temperature: torch.bincount(torch.cat([MultinomialSampler(temperature).sample_nodes(
        LOG_PROBS[:1], 1, {})[1][0] for _ in range(400)]), minlength=5) for temperature in (0.2, 5.0)}
    assert counts[0.2][0] > 340 and counts[5.0][0] < 200 and counts[5.0][4] > 30


def test_top_k_draws_only_from_the_k_best_and_checks_k():
    assert drawn(TopKSampler(k=3), 2) == [{0, 1, 2}, {2, 3, 4}]
    assert drawn(TopKSampler(k=2, with_replacement=True), 2, rounds=50) == [{0, 1}, {3, 4}]
    assert drawn(TopKSampler(), 1, rounds=5) == [{0}, {4}]  # k is 1 by default: the greedy choice
    for k, count in ((1, 2), (6, 1)):
        with pytest.raises(ValueError, match=rf"^top-k: k \({k}\) must be at least per_node_beam_size \({count}\) "
                                             r"and at most the number of classes \(5\)$"):
            TopKSampler(k=k).sample_nodes(LOG_PROBS, count, {})
    assert drawn(TopKSampler(k=5), 5, rounds=3) == [set(range(5)), set(range(5))]


def test_top_p_draws_from_the_fewest_tokens_that_pass_p_the_one_passing_included():
    assert drawn(TopPSampler(p=0.7, with_replacement=True), 1) == [{0, 1}, {3, 4}]  # 0.5 + 0.3 passes 0.7
    assert drawn(TopPSampler(p=0.9, with_replacement=True), 1) == [{0, 1, 2}, {2, 3, 4}]
    assert drawn(TopPSampler(p=0.4, with_replacement=True), 1, rounds=50) == [{0}, {4}]
    assert drawn(TopPSampler(p=1.0, with_replacement=True), 1, rounds=600) == [set(range(5)), set(range(5))]
    assert drawn(TopPSampler(p=0.0, with_replacement=True), 1, rounds=50) == [{0}, {4}]
    sampler = TopPSampler()
    assert (sampler.p, sampler.temperature, sampler.with_replacement) == (0.9, 1.0, False)


def test_top_p_without_replacement_keeps_as_many_candidates_as_it_draws():
    assert drawn(TopPSampler(p=0.1), 3, rounds=20) == [{0, 1, 2}, {2, 3, 4}]
    assert drawn(TopPSampler(p=0.1), 5, rounds=3) == [set(range(5)), set(range(5))]
    with pytest.raises(ValueError, match=r"^top-p: per_node_beam_size \(6\) exceeds the number of classes \(5\)$"):
        TopPSampler().sample_nodes(LOG_PROBS, 6, {})


@pytest.mark.parametrize("p", [-0.1, 1.5, math.nan])
def test_top_p_refuses_a_p_outside_zero_to_one(p):
    with pytest.raises(ValueError, match=r"^top-p: p must be between 0 and 1, not "):
        TopPSampler(p=p)


def test_a_tempered_top_p_reaches_p_over_the_tempered_probabilities():
    # at temperature 0.25 beam 0 is 0.5^4 : 0.3^4 : ... = 0.87, 0.11, ...: 0.87 alone passes 0.8
    assert drawn(TopPSampler(p=0.8, temperature=0.25, with_replacement=True), 1, rounds=100)[0] == {0}
