"""``allennlp.nn.util`` as AllenNLP users call it: each function against a hand-computed case or an independent
formulation (plain torch over explicit loops)."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys

import pytest
import torch

from distrain.errors import ConfigError
from support.paths import ROOT

SRC = ROOT / "src"


def util():
    from distrain.allennlp.nn import util

    return util


def test_allennlp_paths_are_distrains_modules():
    """In a plain Python (the suite's own ``tests/allennlp`` folder would otherwise be found by that name)."""
    script = ("import allennlp.nn.util, distrain.allennlp.nn.util, allennlp.training.metrics as m, "
              "distrain.metrics.covariance as c; "
              "assert allennlp.nn.util is distrain.allennlp.nn.util and m.Covariance is c.Covariance")
    done = subprocess.run([sys.executable, "-P", "-c", script], env={**os.environ, "PYTHONPATH": str(SRC)},
                          capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr


def test_masked_reductions_over_the_unmasked_entries_only():
    u = util()
    vector = torch.tensor([[1.0, 5.0, -2.0], [4.0, float("nan"), 0.0]])
    mask = torch.tensor([[True, False, True], [False, False, False]])
    assert u.masked_max(vector, mask, dim=1).tolist()[0] == 1.0
    assert u.masked_max(vector, mask, dim=1)[1] == torch.finfo(torch.float).min  # nothing unmasked
    assert u.masked_mean(vector, mask, dim=1).tolist() == [-0.5, 0.0]  # no NaN from the masked entry
    probabilities = u.masked_log_softmax(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[True, False, True]])).exp()
    expected = torch.tensor([math.exp(1), 0.0, math.exp(3)]) / (math.exp(1) + math.exp(3))
    torch.testing.assert_close(probabilities[0], expected, atol=1e-6, rtol=0)


def test_logsumexp_is_stable_and_keeps_an_all_minus_infinity_row():
    u = util()
    big = torch.tensor([[1000.0, 1000.0], [-float("inf"), -float("inf")]])
    result = u.logsumexp(big, dim=-1)
    assert result[0].item() == pytest.approx(1000 + math.log(2))
    assert result[1].item() == -float("inf")


def test_lengths_masks_and_sorting_round_trip():
    u = util()
    lengths = torch.tensor([2, 4, 1])
    mask = u.get_mask_from_sequence_lengths(lengths, 4)
    assert mask.tolist() == [[True, True, False, False], [True] * 4, [True, False, False, False]]
    assert u.get_lengths_from_binary_sequence_mask(mask).tolist() == [2, 4, 1]
    batch = torch.arange(3.0).view(3, 1)
    ordered, ordered_lengths, restoration, permutation = u.sort_batch_by_length(batch, lengths)
    assert ordered_lengths.tolist() == [4, 2, 1] and permutation.tolist() == [1, 0, 2]
    assert torch.equal(ordered.index_select(0, restoration), batch)


def test_index_selection_matches_explicit_loops():
    u = util()
    target = torch.randn(2, 5, 3)
    indices = torch.tensor([[0, 4, 4], [1, 2, 3]])
    selected = u.batched_index_select(target, indices)
    for row, column in itertools.product(range(2), range(3)):
        assert torch.equal(selected[row, column], target[row, indices[row, column]])
    assert u.flatten_and_batch_shift_indices(indices, 5).tolist() == [0, 4, 4, 6, 7, 8]
    with pytest.raises(ConfigError):
        u.flatten_and_batch_shift_indices(indices, 4)
    spans, span_mask = u.batched_span_select(target, torch.tensor([[[1, 2]], [[0, 0]]]))
    assert span_mask.tolist() == [[[True, True]], [[True, False]]]
    assert torch.equal(spans[0, 0], target[0, 1:3])


def test_masked_topk_keeps_input_order_and_skips_masked_items():
    u = util()
    scores = torch.tensor([[5.0, 9.0, 1.0, 7.0]])
    mask = torch.tensor([[True, False, True, True]])
    values, kept, indices = u.masked_topk(scores, mask, 2)
    assert indices.tolist() == [[0, 3]] and values.tolist() == [[5.0, 7.0]] and kept.all()


def _brute_force_paths(scores, transitions):
    steps, tags = scores.shape
    ranked = []
    for path in itertools.product(range(tags), repeat=steps):
        total = sum(scores[t, tag] for t, tag in enumerate(path))
        total += sum(transitions[a, b] for a, b in zip(path, path[1:]))
        ranked.append((float(total), list(path)))
    return sorted(ranked, reverse=True)


def test_viterbi_decode_finds_the_brute_force_best_paths():
    u = util()
    generator = torch.Generator().manual_seed(3)
    scores, transitions = torch.randn(4, 3, generator=generator), torch.randn(3, 3, generator=generator)
    ranked = _brute_force_paths(scores, transitions)
    path, score = u.viterbi_decode(scores, transitions)
    assert path == ranked[0][1] and float(score) == pytest.approx(ranked[0][0], abs=1e-5)
    paths, top_scores = u.viterbi_decode(scores, transitions, top_k=3)
    assert paths == [entry[1] for entry in ranked[:3]]
    observed, _ = u.viterbi_decode(scores, transitions, tag_observations=[-1, 2, -1, -1])
    assert observed[1] == 2


def test_sequence_cross_entropy_batch_and_token_averages():
    u = util()
    logits = torch.randn(2, 3, 4)
    targets = torch.tensor([[1, 2, 0], [3, 0, 0]])
    weights = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    token_losses = torch.nn.functional.cross_entropy(logits.view(-1, 4), targets.view(-1), reduction="none").view(2, 3)
    per_sequence = (token_losses * weights).sum(1) / weights.sum(1)
    torch.testing.assert_close(u.sequence_cross_entropy_with_logits(logits, targets, weights), per_sequence.mean())
    torch.testing.assert_close(u.sequence_cross_entropy_with_logits(logits, targets, weights, average="token"),
                               (token_losses * weights).sum() / weights.sum())
    smoothed = u.sequence_cross_entropy_with_logits(logits, targets, weights, average=None, label_smoothing=0.1)
    log_probs = logits.log_softmax(-1)
    soft = torch.full_like(log_probs, 0.1 / 4).scatter(-1, targets.unsqueeze(-1), 0.9 + 0.1 / 4)
    expected = ((-(log_probs * soft).sum(-1)) * weights).sum(1) / weights.sum(1)
    torch.testing.assert_close(smoothed, expected)


def test_numbered_combinations_and_their_widths():
    u = util()
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    torch.testing.assert_close(u.combine_tensors("1,2,1*2", [x, y]), torch.cat([x, y, x * y], -1))
    assert u.get_combined_dim("1,2,1-2", [3, 3]) == 9
    with pytest.raises(ConfigError):
        u.combine_tensors("1+3", [x, y])


def test_text_field_helpers():
    u = util()
    tensors = {"tokens": {"tokens": torch.tensor([[3, 4, 0], [5, 0, 0]])}}
    assert u.get_text_field_mask(tensors).tolist() == [[True, True, False], [True, False, False]]
    assert u.get_token_ids_from_text_field_tensors(tensors) is tensors["tokens"]["tokens"]


def test_dtype_limits():
    u = util()
    assert u.min_value_of_dtype(torch.int8) == -128 and u.max_value_of_dtype(torch.half) == 65504
    assert u.tiny_value_of_dtype(torch.float) == 1e-13 and u.tiny_value_of_dtype(torch.half) == 1e-4
