"""``SinusoidalPositionalEncoding``: the Transformer's fixed position signal as a module built from a config."""

from __future__ import annotations

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.zoo.rc.modules.positional_features import add_positional_features


class SinusoidalPositionalEncoding(torch.nn.Module, FromParams):
    """Adds to a ``(batch, timesteps, dim)`` tensor sines and cosines of ``dim // 2`` timescales between
    ``min_timescale`` and ``max_timescale`` (the table of ``allennlp.nn.util.add_positional_features``)."""

    def __init__(self, min_timescale: float = 1.0, max_timescale: float = 1.0e4):
        super().__init__()
        self.min_timescale = min_timescale
        self.max_timescale = max_timescale

    def forward(self, input_tensor: torch.Tensor) -> torch.Tensor:
        return add_positional_features(input_tensor, self.min_timescale, self.max_timescale)
