"""``top-p`` (nucleus): each beam's next tokens drawn from the fewest most likely ones whose probabilities reach
``p`` (the first to pass it included)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveFloat
from distrain.modules.beam_sampler import Sampler, StateType, draw, lowest, tempered


@Sampler.register("top-p")
class TopPSampler(Sampler):
    """``p`` in [0, 1]; without replacement at least ``per_node_beam_size`` tokens stay candidates."""

    def __init__(self, p: float = 0.9, temperature: PositiveFloat = 1.0, with_replacement: bool = False) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"top-p: p must be between 0 and 1, not {p}")
        self.p = p
        self.temperature = temperature
        self.with_replacement = with_replacement

    def sample_nodes(self, log_probs: torch.Tensor, per_node_beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        if per_node_beam_size > log_probs.size(1):
            raise ValueError(f"top-p: per_node_beam_size ({per_node_beam_size}) exceeds the number of classes "
                             f"({log_probs.size(1)})")
        descending, order = torch.sort(tempered(log_probs, self.temperature), dim=-1, descending=True)
        beyond = torch.softmax(descending, dim=-1).cumsum(dim=-1) >= self.p
        beyond[..., 1:] = beyond[..., :-1].clone()  # keep the token that passes p
        beyond[..., 0] = False
        if not self.with_replacement:
            beyond[..., :per_node_beam_size] = False
        descending = descending.masked_fill(beyond, lowest(descending))
        chosen = draw(torch.softmax(descending, dim=-1), per_node_beam_size, self.with_replacement)
        indices = order.gather(-1, chosen)
        return torch.gather(log_probs, 1, indices), indices, state
