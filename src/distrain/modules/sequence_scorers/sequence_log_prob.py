"""``sequence-log-prob``: a sequence scores its summed token log probabilities (the default)."""

from __future__ import annotations

import torch

from distrain.modules.sequence_scorer import FinalSequenceScorer


@FinalSequenceScorer.register("sequence-log-prob")
class SequenceLogProbabilityScorer(FinalSequenceScorer):
    """The summed log probability, as it is."""

    def score(self, predictions: torch.Tensor, log_probabilities: torch.Tensor, end_index: int) -> torch.Tensor:
        return log_probabilities
