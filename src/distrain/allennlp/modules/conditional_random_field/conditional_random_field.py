"""AllenNLP's ``ConditionalRandomField`` and ``allowed_transitions`` over distrain's CRF
(:mod:`distrain.zoo.tagging.modules.conditional_random_field`).

What differs is only the calling convention: ``allowed_transitions`` takes AllenNLP's ``{index: label}`` dict,
``forward`` returns the batch's summed log-likelihood (mask optional), and ``viterbi_tags`` takes ``top_k``.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import torch

from distrain.config.errors import ConfigError as ConfigurationError
from distrain.modules.viterbi import k_best_viterbi
from distrain.zoo.tagging.modules import conditional_random_field as crf
from distrain.zoo.tagging.modules.conditional_random_field import is_transition_allowed
from distrain.zoo.tagging.modules.weighted_conditional_random_field import WeightedConditionalRandomField

#: the score AllenNLP gives a forbidden transition or a padded step when it decodes
FORBIDDEN = -10000.0


def allowed_transitions(constraint_type: str, labels: Mapping[int, str] | Sequence[str]) -> list[tuple[int, int]]:
    """The allowed ``(from, to)`` pairs; START is ``len(labels)``, END ``len(labels) + 1``."""
    if isinstance(labels, Mapping):
        labels = [labels[index] for index in range(len(labels))]
    if constraint_type not in crf.ENCODINGS:
        raise ConfigurationError(f"Unknown constraint type: {constraint_type}; one of {', '.join(crf.ENCODINGS)}")
    return crf.allowed_transitions(constraint_type, labels)


class ConditionalRandomField(crf.ConditionalRandomField):
    def forward(self, inputs: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The summed log-likelihood of ``tags`` over the batch."""
        if mask is None:
            mask = torch.ones(*tags.shape, dtype=torch.bool, device=inputs.device)
        return super().forward(inputs, tags, mask.bool()).sum()

    def viterbi_tags(self, logits: torch.Tensor, mask: torch.Tensor | None = None, top_k: int | None = None):
        """Per item, its best ``(tags, score)``; with ``top_k``, a list of its ``top_k`` best."""
        if mask is None:
            mask = torch.ones(*logits.shape[:2], dtype=torch.bool, device=logits.device)
        tags = self.num_tags
        start, end = tags, tags + 1
        transitions = torch.full((tags + 2, tags + 2), FORBIDDEN, device=logits.device)
        allowed = self._allowed.to(logits.device)
        transitions[:tags, :tags] = self.transitions.detach() * allowed[:tags, :tags] + \
            FORBIDDEN * (1 - allowed[:tags, :tags])
        if self.include_start_end_transitions:
            transitions[start, :tags] = self.start_transitions.detach() * allowed[start, :tags] + \
                FORBIDDEN * (1 - allowed[start, :tags])
            transitions[:tags, end] = self.end_transitions.detach() * allowed[:tags, end] + \
                FORBIDDEN * (1 - allowed[:tags, end])
        else:
            transitions[start, :tags] = FORBIDDEN * (1 - allowed[start, :tags])
            transitions[:tags, end] = FORBIDDEN * (1 - allowed[:tags, end])
        results = []
        for scores, keep in zip(logits.detach(), mask.bool()):
            length = int(keep.sum())
            framed = torch.full((length + 2, tags + 2), FORBIDDEN, device=logits.device)
            framed[0, start] = 0.0
            framed[1:length + 1, :tags] = scores[keep]
            framed[length + 1, end] = 0.0
            paths, path_scores = k_best_viterbi(framed, transitions, top_k=top_k or 1)
            decoded = [(path[1:-1], float(score)) for path, score in zip(paths, path_scores)]
            results.append(decoded[0] if top_k is None else decoded)
        return results


class ConditionalRandomFieldWeightEmission(ConditionalRandomField, WeightedConditionalRandomField):
    """Each tag's emission score weighed by its ``label_weights`` entry (see
    :mod:`distrain.zoo.tagging.modules.weighted_conditional_random_field`)."""

    def __init__(self, num_tags: int, label_weights: Sequence[float],
                 constraints: list[tuple[int, int]] | None = None, include_start_end_transitions: bool = True) -> None:
        super().__init__(num_tags, label_weights, "emission", constraints, include_start_end_transitions)


class ConditionalRandomFieldWeightTrans(ConditionalRandomField, WeightedConditionalRandomField):
    """Emission scores and the transitions out of each tag weighed by its ``label_weights`` entry."""

    def __init__(self, num_tags: int, label_weights: Sequence[float],
                 constraints: list[tuple[int, int]] | None = None, include_start_end_transitions: bool = True) -> None:
        super().__init__(num_tags, label_weights, "emission_transition", constraints, include_start_end_transitions)


class ConditionalRandomFieldWeightLannoy(ConditionalRandomField, WeightedConditionalRandomField):
    """Lannoy et al.'s weighting: the gold path as in the transition weighting, each normaliser by the gold tag."""

    def __init__(self, num_tags: int, label_weights: Sequence[float],
                 constraints: list[tuple[int, int]] | None = None, include_start_end_transitions: bool = True) -> None:
        super().__init__(num_tags, label_weights, "lannoy", constraints, include_start_end_transitions)


__all__ = ["ConditionalRandomField", "ConditionalRandomFieldWeightEmission", "ConditionalRandomFieldWeightLannoy",
           "ConditionalRandomFieldWeightTrans", "allowed_transitions", "is_transition_allowed"]
