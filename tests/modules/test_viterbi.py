"""distrain.modules.viterbi against brute force over every tag path: the best path and its score with START/END
potentials and forbidden (-inf) transitions, the k best, forced observations, and the BIO potentials."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from distrain.modules.viterbi import (OBSERVED, bio_transition_potentials, framed_transitions, k_best_viterbi,
                                      viterbi_decode)

INF = math.inf


def ranked_paths(scores, transitions, start=None, end=None, observations=None):
    """Every path's score, best first (ties: the path first in lexicographic order)."""
    steps, tags = scores.shape
    ranked = []
    for path in itertools.product(range(tags), repeat=steps):
        if observations and any(o != -1 and o != tag for o, tag in zip(observations, path)):
            continue
        total = sum(float(scores[t, tag]) for t, tag in enumerate(path))
        total += sum(float(transitions[a, b]) for a, b in zip(path, path[1:]))
        total += (float(start[path[0]]) if start is not None else 0.0) + (float(end[path[-1]]) if end is not None else 0.0)
        ranked.append((total, list(path)))
    return sorted(ranked, key=lambda entry: -entry[0])


def problem(seed: int, steps: int = 4, tags: int = 3):
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(steps, tags, generator=generator, dtype=torch.float64)
    transitions = torch.randn(tags, tags, generator=generator, dtype=torch.float64)
    start, end = (torch.randn(tags, generator=generator, dtype=torch.float64) for _ in range(2))
    return scores, transitions, start, end


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_best_path_and_its_score_with_start_and_end_potentials(seed):
    scores, transitions, start, end = problem(seed)
    transitions[0, 1] = -INF
    best_score, best = ranked_paths(scores, transitions, start, end)[0]
    path, score = viterbi_decode(scores, transitions, start, end)
    assert path == best and score == OBSERVED  # AllenNLP's score: the END observation's, whatever the path
    assert viterbi_decode(scores, transitions)[0] == ranked_paths(scores, transitions)[0][1]
    assert viterbi_decode(scores, transitions, start)[0] == ranked_paths(scores, transitions, start=start)[0][1]
    assert viterbi_decode(scores, transitions, None, end)[0] == ranked_paths(scores, transitions, end=end)[0][1]


@pytest.mark.parametrize("seed", [3, 4])
def test_the_k_best_paths_with_and_without_the_frame(seed):
    scores, transitions, start, end = problem(seed)
    ranked = ranked_paths(scores, transitions)
    paths, best = k_best_viterbi(scores, transitions, top_k=4)
    assert paths == [entry[1] for entry in ranked[:4]]
    assert best.tolist() == pytest.approx([entry[0] for entry in ranked[:4]], abs=1e-6)
    # framed, the forced START and END keep one row each: only the best path is the brute force's, as in AllenNLP
    framed = ranked_paths(scores, transitions, start, end)
    paths, best = k_best_viterbi(scores, transitions, start_transitions=start, end_transitions=end, top_k=3)
    assert paths[0] == framed[0][1] and float(best[0]) == OBSERVED
    assert k_best_viterbi(scores, transitions)[0] == [ranked[0][1]]
    assert k_best_viterbi(scores, transitions, end_transitions=end)[0] == [ranked_paths(scores, transitions,
                                                                                         end=end)[0][1]]


def test_an_observed_tag_is_forced_and_more_paths_than_exist_gives_them_all():
    scores, transitions, _, _ = problem(5, steps=3, tags=2)
    observations = [-1, 1, -1]
    ranked = ranked_paths(scores, transitions, observations=observations)
    paths, _ = k_best_viterbi(scores, transitions, observations, top_k=2)
    assert paths[0] == ranked[0][1] and all(path[1] == 1 for path in paths)
    every = k_best_viterbi(scores, transitions, [0, -1, -1], top_k=8)[0]  # as many as there are paths
    assert len(every) == 8 and sorted(every[:4]) == [[0, a, b] for a in range(2) for b in range(2)]
    with pytest.raises(ValueError, match="^2 observations for a sequence of 3$"):
        k_best_viterbi(scores, transitions, [0, 1])


def test_the_frame_adds_start_and_end_tags_that_nothing_enters_or_leaves():
    transitions = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    framed = framed_transitions(torch.zeros(1, 2), transitions, torch.tensor([5.0, 6.0]), torch.tensor([7.0, 8.0]))
    assert framed.tolist() == [[1.0, 2.0, -INF, 7.0], [3.0, 4.0, -INF, 8.0], [5.0, 6.0, -INF, -INF],
                               [-INF, -INF, -INF, -INF]]
    bare = framed_transitions(torch.zeros(1, 2), transitions, None, None)
    assert bare.tolist() == [[1.0, 2.0, -INF, 0.0], [3.0, 4.0, -INF, 0.0], [0.0, 0.0, -INF, -INF],
                             [-INF, -INF, -INF, -INF]]
    assert framed_transitions(torch.zeros(1, 2, dtype=torch.float64), transitions, None, None).dtype == torch.float64


def test_bio_potentials_forbid_an_inside_tag_after_anything_but_its_own_span_and_first():
    transitions, start = bio_transition_potentials(["O", "B-A", "I-A", "B-B", "I-B"])
    allowed = [[value == 0 for value in row] for row in transitions.tolist()]
    assert allowed == [[True, True, False, True, False],
                       [True, True, True, True, False],
                       [True, True, True, True, False],
                       [True, True, False, True, True],
                       [True, True, False, True, True]]
    assert all(value in (0.0, -INF) for row in transitions.tolist() for value in row)
    assert start.tolist() == [0.0, 0.0, -INF, 0.0, -INF]
