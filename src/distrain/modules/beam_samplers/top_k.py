"""``top-k``: each beam's next tokens drawn from its ``k`` most likely ones."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveFloat
from distrain.modules.beam_sampler import Sampler, StateType, draw, tempered


@Sampler.register("top-k")
class TopKSampler(Sampler):
    """``k`` must be at least ``per_node_beam_size`` and at most the number of classes."""

    def __init__(self, k: int = 1, temperature: PositiveFloat = 1.0, with_replacement: bool = False) -> None:
        self.k = k
        self.temperature = temperature
        self.with_replacement = with_replacement

    def sample_nodes(self, log_probs: torch.Tensor, per_node_beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        if not per_node_beam_size <= self.k <= log_probs.size(1):
            raise ValueError(f"top-k: k ({self.k}) must be at least per_node_beam_size ({per_node_beam_size}) and at "
                             f"most the number of classes ({log_probs.size(1)})")
        best, best_indices = log_probs.topk(self.k, dim=-1)
        chosen = draw(torch.softmax(tempered(best, self.temperature), dim=-1), per_node_beam_size, self.with_replacement)
        indices = best_indices.gather(-1, chosen)
        return log_probs.gather(1, indices), indices, state
