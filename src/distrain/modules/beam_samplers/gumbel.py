"""``gumbel``: stochastic beam search (Kool, van Hoof and Welling, 2019): beams are the top ``beam_size`` of
Gumbel-perturbed sequence log probabilities, each child's perturbation conditioned on its parent's so the beams are
a sample without replacement of whole sequences. The state keeps each beam's perturbed value (``G_phi_S``) and its
log probability (``phi_S``)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveFloat
from distrain.modules.beam_sampler import Sampler, StateType


@Sampler.register("gumbel")
class GumbelSampler(Sampler):
    """Beams drawn by perturbed log probabilities (``temperature`` tempers the token distributions first)."""

    def __init__(self, temperature: PositiveFloat = 1.0) -> None:
        self.temperature = temperature

    def init_state(self, start_class_log_probabilities: torch.Tensor, batch_size: int, num_classes: int) -> StateType:
        zeros = start_class_log_probabilities.new_zeros((batch_size, num_classes))
        return {"G_phi_S": self.gumbel_with_max(start_class_log_probabilities, zeros)}

    def sample_nodes(self, log_probs: torch.Tensor, per_node_beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        tempered = log_probs if self.temperature == 1.0 else torch.log_softmax(log_probs / self.temperature, dim=-1)
        phi = state["phi_S"].unsqueeze(-1) + tempered  # each child's sequence log probability
        perturbed = self.gumbel_with_max(phi, state["G_phi_S"].unsqueeze(-1))
        best, indices = perturbed.topk(per_node_beam_size, dim=-1)
        return log_probs.gather(1, indices), indices, {"G_phi_S": best}

    def sample_beams(self, log_probs: torch.Tensor, beam_size: int,
                     state: StateType) -> tuple[torch.Tensor, torch.Tensor, StateType]:
        batch_size = log_probs.size(0)
        perturbed, indices = state["G_phi_S"].reshape_as(log_probs).topk(beam_size, dim=-1)
        chosen = log_probs.gather(1, indices)
        chosen, order = chosen.sort(dim=-1, descending=True)  # best sequence first
        indices, perturbed = indices.gather(1, order), perturbed.gather(1, order)
        return chosen, indices, {"G_phi_S": perturbed.reshape(batch_size * beam_size),
                                 "phi_S": chosen.reshape(batch_size * beam_size)}

    def gumbel(self, phi: torch.Tensor) -> torch.Tensor:
        """``phi`` plus standard Gumbel noise."""
        return phi - torch.log(-torch.log(torch.rand_like(phi)))

    def gumbel_with_max(self, phi: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Gumbels of location ``phi`` conditioned on their maximum being ``target`` (Kool et al.'s eq. 23, in its
        numerically stable form)."""
        perturbed = self.gumbel(phi)
        top = perturbed.max(dim=-1, keepdim=True).values
        v = target - perturbed + torch.log1p(-torch.exp(perturbed - top))
        return target - torch.relu(v) - torch.log1p(torch.exp(-v.abs()))
