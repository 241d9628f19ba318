"""``length-normalized-sequence-log-prob``: the summed log probability over the sequence's length to the power
``length_penalty`` (its tokens up to the end token, that one included; a sequence cut by ``max_steps`` has none)."""

from __future__ import annotations

import torch

from distrain.modules.sequence_scorer import FinalSequenceScorer


@FinalSequenceScorer.register("length-normalized-sequence-log-prob")
class LengthNormalizedSequenceLogProbabilityScorer(FinalSequenceScorer):
    """A positive ``length_penalty`` favours longer sequences, a negative one shorter ones."""

    def __init__(self, length_penalty: float = 1.0) -> None:
        self.length_penalty = length_penalty

    def score(self, predictions: torch.Tensor, log_probabilities: torch.Tensor, end_index: int) -> torch.Tensor:
        lengths = (predictions != end_index).long().sum(dim=2) + (predictions[:, :, -1] == end_index).long()
        return log_probabilities / (lengths.to(log_probabilities.dtype) ** self.length_penalty)
