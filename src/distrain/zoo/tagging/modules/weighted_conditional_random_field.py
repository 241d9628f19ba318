"""A CRF whose log-likelihood weighs each label (AllenNLP 2.10's weighted CRFs, for imbalanced tag sets).

``label_weights`` (one per tag) enter as ``weight_strategy`` says:

- ``emission``: every tag's emission score is multiplied by its weight, in the gold path and in the partition;
- ``emission_transition``: the transition out of a tag too (``transitions[i, j] * w[i]``);
- ``lannoy``: Lannoy et al. (2012): the gold path weighted as in ``emission_transition``, the partition left
  unweighted but each position's normaliser (of the forward recursion scaled to sum to one) multiplied by the
  weight of the gold tag there; with every weight 1 this is the plain CRF.

Decoding (``viterbi_tags``) uses the unweighted scores, as AllenNLP's did.
"""

from __future__ import annotations

from typing import Literal, Sequence

import torch

from distrain.zoo.tagging.modules.conditional_random_field import ConditionalRandomField


class WeightedConditionalRandomField(ConditionalRandomField):
    def __init__(self, num_tags: int, label_weights: Sequence[float],
                 weight_strategy: Literal["emission", "emission_transition", "lannoy"] = "emission",
                 constraints: list[tuple[int, int]] | None = None, include_start_end_transitions: bool = True) -> None:
        super().__init__(num_tags, constraints, include_start_end_transitions)
        if len(label_weights) != num_tags:
            raise ValueError(f"{len(label_weights)} label weights for {num_tags} tags")
        self.label_weights = torch.nn.Parameter(torch.as_tensor(label_weights, dtype=torch.float), requires_grad=False)
        self.weight_strategy = weight_strategy

    def forward(self, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        weights = self.label_weights.to(logits.dtype)
        weighted = logits * weights
        if self.weight_strategy == "emission":
            return self._gold_score(weighted, tags, mask) - self._log_partition(weighted, mask)
        transitions = self.transitions * weights.unsqueeze(1)
        gold = self._gold_score(weighted, tags, mask, transitions)
        if self.weight_strategy == "emission_transition":
            return gold - self._log_partition(weighted, mask, transitions)
        return gold - self._lannoy_partition(logits, tags, mask)

    def _lannoy_partition(self, logits: torch.Tensor, tags: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The forward recursion, normalised at each position, its log normalisers weighted by the gold tags."""
        start, end = self._start_end(logits)
        weights = self.label_weights.to(logits.dtype)[tags.clamp(min=0)]
        mask = mask.bool()
        alpha = start + logits[:, 0]
        normaliser = torch.logsumexp(alpha, dim=1)
        alpha = alpha - normaliser.unsqueeze(1)
        total = normaliser * weights[:, 0]
        for t in range(1, logits.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + self.transitions + logits[:, t].unsqueeze(1), dim=1)
            normaliser = torch.logsumexp(step, dim=1)
            kept = mask[:, t]
            alpha = torch.where(kept.unsqueeze(1), step - normaliser.unsqueeze(1), alpha)
            total = total + torch.where(kept, normaliser * weights[:, t], torch.zeros_like(normaliser))
        return total + torch.logsumexp(alpha + end, dim=1)
