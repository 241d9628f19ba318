"""Viterbi decoding of one sequence under fixed pairwise potentials (AllenNLP's ``nn.util.viterbi_decode``), and
the BIO constraints semantic role labellers decode under.

The arithmetic is AllenNLP's, step for step, so the chosen paths are its paths: the sequence is framed by START
and END pseudo-tags whose observations score 1e5 (in float32 that large offset rounds the per-token scores the
path sums, so near-ties are decided as AllenNLP decided them), and every argmax is ``torch.topk(k=1)``, which
breaks ties differently from ``max``.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch

#: the score AllenNLP gives an observed tag (here: the START and END pseudo-tags)
OBSERVED = 100000.0


def framed_transitions(scores: torch.Tensor, transitions: torch.Tensor, start_transitions: torch.Tensor | None,
                       end_transitions: torch.Tensor | None) -> torch.Tensor:
    """``transitions`` ``[C, C]`` with a START tag (row and column ``C``) and an END tag (``C + 1``) added, on
    ``scores``' device and dtype: START goes to each tag with its start potential (0 if none), each tag to END
    with its end potential, and nothing enters START or leaves END."""
    tags = transitions.shape[0]
    start = scores.new_zeros(tags) if start_transitions is None else start_transitions
    end = scores.new_zeros(tags) if end_transitions is None else end_transitions
    forbidden = scores.new_full((2,), -math.inf)
    framed = scores.new_zeros(tags + 2, tags + 2)
    framed[:tags, :tags] = transitions
    framed[-2, :] = torch.cat([start, forbidden])
    framed[-1, :] = -math.inf
    framed[:, -1] = torch.cat([end, forbidden])
    framed[:, -2] = -math.inf
    return framed


def viterbi_decode(scores: torch.Tensor, transitions: torch.Tensor,
                   start_transitions: torch.Tensor | None = None,
                   end_transitions: torch.Tensor | None = None) -> tuple[list[int], float]:
    """The best tag path through ``scores`` ``[T, C]`` under ``transitions`` ``[C, C]`` (from, to) and the
    START/END potentials (``-inf`` forbids), with its score (offset by the observed START and END)."""
    length, tags = scores.shape
    framed = framed_transitions(scores, transitions, start_transitions, end_transitions)
    width = tags + 2
    observed_start = scores.new_zeros(width)
    observed_start[-2] = OBSERVED
    emissions = torch.cat([scores, scores.new_full((length, 2), -math.inf)], -1)
    path_scores = [observed_start.unsqueeze(0)]
    pointers = []
    for t in range(length + 1):
        summed = (path_scores[-1].unsqueeze(2) + framed).view(-1, width)
        best, pointer = torch.topk(summed, k=1, dim=0)
        if t == length:  # the END observation
            observed_end = scores.new_zeros(width)
            observed_end[-1] = OBSERVED
            path_scores.append(observed_end.unsqueeze(0))
        else:
            path_scores.append(emissions[t] + best)
        pointers.append(pointer.squeeze())
    score, last = torch.topk(path_scores[-1].view(-1), k=1, dim=0)
    path = [int(last[0])]
    for pointer in reversed(pointers):
        path.append(int(pointer.view(-1)[path[-1]]))
    path.reverse()
    return path[1:-1], float(score[0])



def k_best_viterbi(scores: torch.Tensor, transitions: torch.Tensor, observations: Sequence[int] | None = None,
                   start_transitions: torch.Tensor | None = None, end_transitions: torch.Tensor | None = None,
                   top_k: int = 1) -> tuple[list[list[int]], torch.Tensor]:
    """The ``top_k`` best tag paths through ``scores`` ``[T, C]`` and their scores, AllenNLP's full form: a tag
    observed at a step (``observations``, ``-1`` where none) is forced there with score 1e5, and START/END
    potentials, when either is given, frame the sequence as in :func:`viterbi_decode`."""
    length, tags = scores.shape
    observations = list(observations) if observations else [-1] * length
    if len(observations) != length:
        raise ValueError(f"{len(observations)} observations for a sequence of {length}")
    framed = start_transitions is not None or end_transitions is not None
    if framed:
        transitions, tags = framed_transitions(scores, transitions, start_transitions, end_transitions), tags + 2
        observations = [tags - 2] + observations + [tags - 1]
        scores = torch.cat([scores, scores.new_full((length, 2), -math.inf)], -1)
        scores = torch.cat([scores.new_zeros(1, tags), scores, scores.new_zeros(1, tags)], 0)
        length += 2

    def observed(tag: int) -> torch.Tensor:
        forced = scores.new_zeros(tags)
        forced[tag] = OBSERVED
        return forced.unsqueeze(0)

    path_scores = [observed(observations[0]) if observations[0] != -1 else scores[0].unsqueeze(0)]
    pointers = []
    for t in range(1, length):
        summed = (path_scores[-1].unsqueeze(2) + transitions).view(-1, tags)
        best, pointer = torch.topk(summed, k=min(summed.size(0), top_k), dim=0)
        path_scores.append(observed(observations[t]) if observations[t] != -1 else scores[t] + best)
        pointers.append(pointer.squeeze())
    final = path_scores[-1].view(-1)
    best_scores, best_last = torch.topk(final, k=min(final.size(0), top_k), dim=0)
    paths = []
    for last in best_last.tolist():
        path = [last]
        for pointer in reversed(pointers):
            path.append(int(pointer.view(-1)[path[-1]]))
        path.reverse()
        if framed:
            path = path[1:-1]
        paths.append([tag % tags for tag in path])
    return paths, best_scores


def bio_transition_potentials(labels: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Pairwise and START potentials (0 or ``-inf``) for BIO tags as AllenNLP's SRL models decode: ``I-X`` only
    after ``B-X`` or ``I-X``, never first."""
    count = len(labels)
    transitions = torch.zeros(count, count)
    for i, previous in enumerate(labels):
        for j, label in enumerate(labels):
            if i != j and label[0] == "I" and previous != "B" + label[1:]:
                transitions[i, j] = -math.inf
    start = torch.tensor([-math.inf if label[0] == "I" else 0.0 for label in labels])
    return transitions, start
