"""Constraint base: a rule a beam search's sequences must keep (AllenNLP's ``Constraint``;
``beam_search.constraints``).

A constraint keeps a state per item and beam (``init_state`` gives one beam per item), sets the log probability of
the tokens it forbids to the lowest value (``apply``, on ``(batch, beams, classes)``), and follows the search:
``update_state`` takes each beam's new token and the beam it extends (``last_backpointer``; none at the first step,
where every beam extends the one start).
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from distrain.registry import Registrable

ConstraintStateType = list[list[dict[str, Any]]]


class Constraint(Registrable):
    def init_state(self, batch_size: int) -> ConstraintStateType:
        raise NotImplementedError

    def apply(self, state: ConstraintStateType, class_log_probabilities: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def update_state(self, state: ConstraintStateType, last_prediction: torch.Tensor,
                     last_backpointer: torch.Tensor | None = None) -> ConstraintStateType:
        batch_size, beam_size = last_prediction.shape
        copied = [[copy.deepcopy(beams[0 if last_backpointer is None else int(last_backpointer[i, j])])
                   for j in range(beam_size)] for i, beams in enumerate(state)]
        return self._update_state(copied, last_prediction)

    def _update_state(self, state: ConstraintStateType, last_prediction: torch.Tensor) -> ConstraintStateType:
        """``state`` (each beam's own copy, already following its backpointer) after each beam's ``last_prediction``."""
        raise NotImplementedError
