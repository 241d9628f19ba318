"""Sampler base: how a beam search picks its candidates (AllenNLP's ``Sampler``; ``beam_search.sampler``).

``sample_nodes`` picks ``per_node_beam_size`` next tokens for each beam from its ``(beams, classes)`` log
probabilities; ``sample_beams`` picks the ``beam_size`` survivors of each item from its ``(batch, candidates)``
summed log probabilities (and, at the first step, the first tokens). Both return the chosen log probabilities, their
indices and the sampler's state, which ``init_state`` starts from the first step's log probabilities.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.registry import Registrable

StateType = dict[str, torch.Tensor]


class Sampler(Registrable):
    default_implementation = "deterministic"

    def init_state(self, start_class_log_probabilities: torch.Tensor, batch_size: int, num_classes: int) -> StateType:
        return {}

    def sample_nodes(self, log_probs: torch.Tensor, per_node_beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        raise NotImplementedError

    def sample_beams(self, log_probs: torch.Tensor, beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        """The ``beam_size`` best of each row (every sampler but Gumbel's keeps the best beams)."""
        selected, indices = torch.topk(log_probs, beam_size)
        return selected, indices, state


def tempered(log_probs: torch.Tensor, temperature: float) -> torch.Tensor:
    """``log_probs`` divided by ``temperature`` (left as they are at 1)."""
    return log_probs if temperature == 1.0 else log_probs / temperature


def draw(probabilities: torch.Tensor, count: int, with_replacement: bool) -> torch.Tensor:
    """``count`` indices per row drawn from ``probabilities`` (rows need not sum to one)."""
    return torch.multinomial(probabilities, count, replacement=with_replacement)


def lowest(tensor: torch.Tensor) -> Any:
    return torch.finfo(tensor.dtype).min
