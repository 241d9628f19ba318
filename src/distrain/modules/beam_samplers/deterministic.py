"""``deterministic``: the best ``per_node_beam_size`` tokens and the best ``beam_size`` beams (beam search as it is)."""

from __future__ import annotations

import torch

from distrain.modules.beam_sampler import Sampler, StateType


@Sampler.register("deterministic")
class DeterministicSampler(Sampler):
    """The most likely candidates at every step; nothing is drawn."""

    def sample_nodes(self, log_probs: torch.Tensor, per_node_beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        selected, indices = torch.topk(log_probs, per_node_beam_size)
        return selected, indices, state
