"""``repeated-ngram-blocking``: no sequence repeats an n-gram of ``ngram_size`` tokens. Each beam keeps its last
``ngram_size - 1`` tokens (``current_prefix``) and, for every prefix seen, the tokens that followed it
(``seen_ngrams``): those are forbidden after that prefix again."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.beam_constraint import Constraint, ConstraintStateType


@Constraint.register("repeated-ngram-blocking")
class RepeatedNGramBlockingConstraint(Constraint):
    """Blocks the token that would repeat an ``ngram_size``-gram already in the sequence."""

    def __init__(self, ngram_size: PositiveInt) -> None:
        self.ngram_size = ngram_size

    def init_state(self, batch_size: int) -> ConstraintStateType:
        return [[{"seen_ngrams": {}, "current_prefix": []}] for _ in range(batch_size)]

    def apply(self, state: ConstraintStateType, class_log_probabilities: torch.Tensor) -> torch.Tensor:
        lowest = torch.finfo(class_log_probabilities.dtype).min
        for i, beams in enumerate(state):
            for j, beam in enumerate(beams):
                blocked = beam["seen_ngrams"].get(tuple(beam["current_prefix"]))
                if blocked:
                    class_log_probabilities[i, j, blocked] = lowest
        return class_log_probabilities

    def _update_state(self, state: ConstraintStateType, last_prediction: torch.Tensor) -> ConstraintStateType:
        for i, beams in enumerate(state):
            for j, beam in enumerate(beams):
                token = int(last_prediction[i, j])
                prefix = beam["current_prefix"]
                if len(prefix) == self.ngram_size - 1:
                    beam["seen_ngrams"].setdefault(tuple(prefix), []).append(token)
                prefix.append(token)
                if len(prefix) == self.ngram_size:
                    prefix.pop(0)
        return state
