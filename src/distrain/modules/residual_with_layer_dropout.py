"""AllenNLP's ``ResidualWithLayerDropout``: a residual connection whose layer is skipped now and then in training
(stochastic depth, Huang et al., 2016), and scaled by how often it ran when evaluating.

The skip is drawn once per call from torch's global generator, for the whole batch: like dropout, a run on several
workers draws on each worker's own slice, so it equals one process only when ``undecayed_dropout_prob`` is 0.
"""

from __future__ import annotations

import torch


class ResidualWithLayerDropout(torch.nn.Module):
    """``input + output``, or ``input`` alone with probability ``undecayed_dropout_prob × index / total`` (deeper
    layers are skipped more often); in evaluation ``input + (1 - p) × output``."""

    def __init__(self, undecayed_dropout_prob: float = 0.5) -> None:
        super().__init__()
        if not 0 <= undecayed_dropout_prob <= 1:
            raise ValueError(f"undecayed dropout probability has to be between 0 and 1, but got "
                             f"{undecayed_dropout_prob}")
        self.undecayed_dropout_prob = undecayed_dropout_prob

    def forward(self, layer_input: torch.Tensor, layer_output: torch.Tensor, layer_index: int | None = None,
                total_layers: int | None = None) -> torch.Tensor:
        probability = self.undecayed_dropout_prob
        if layer_index is not None and total_layers is not None:
            probability = probability * layer_index / total_layers
        if not self.training:
            return (1 - probability) * layer_output + layer_input
        if probability > 0 and torch.rand(1) < probability:
            return layer_input
        return layer_output + layer_input
