"""FinalSequenceScorer base: the score a beam search ranks its finished sequences by (AllenNLP's
``FinalSequenceScorer``; ``beam_search.final_sequence_scorer``)."""

from __future__ import annotations

import torch

from distrain.registry import Registrable


class FinalSequenceScorer(Registrable):
    default_implementation = "sequence-log-prob"

    def score(self, predictions: torch.Tensor, log_probabilities: torch.Tensor, end_index: int) -> torch.Tensor:
        """``(batch, beam)`` scores of the ``(batch, beam, steps)`` predictions with their summed log
        probabilities."""
        raise NotImplementedError
