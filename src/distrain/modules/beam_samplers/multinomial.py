"""``multinomial``: each beam's next tokens drawn from its whole distribution (sharpened or flattened by
``temperature``)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveFloat
from distrain.modules.beam_sampler import Sampler, StateType, draw, tempered


@Sampler.register("multinomial")
class MultinomialSampler(Sampler):
    """Tokens drawn in proportion to ``softmax(log_probs / temperature)``, with or without replacement."""

    def __init__(self, temperature: PositiveFloat = 1.0, with_replacement: bool = False) -> None:
        self.temperature = temperature
        self.with_replacement = with_replacement

    def sample_nodes(self, log_probs: torch.Tensor, per_node_beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        probabilities = torch.softmax(tempered(log_probs, self.temperature), dim=-1)
        indices = draw(probabilities, per_node_beam_size, self.with_replacement)
        return torch.gather(log_probs, 1, indices), indices, state
