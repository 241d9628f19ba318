"""AllenNLP's ``add_positional_features``: sinusoids of geometrically spaced timescales added to a sequence, all the
sines first and then all the cosines (the Transformer's table, laid out as AllenNLP lays it out, so a model
AllenNLP trained sees the positions it was trained with)."""

from __future__ import annotations

import math

import torch


def add_positional_features(tensor: torch.Tensor, min_timescale: float = 1.0,
                            max_timescale: float = 1.0e4) -> torch.Tensor:
    """``tensor`` (batch, timesteps, dim) plus its positions; an odd ``dim`` gets a last column of zeros."""
    _, timesteps, dim = tensor.size()
    timescales = dim // 2
    steps = torch.arange(timesteps, device=tensor.device, dtype=torch.float)
    increment = math.log(float(max_timescale) / float(min_timescale)) / float(timescales - 1)
    inverse = min_timescale * torch.exp(torch.arange(timescales, device=tensor.device, dtype=torch.float) * -increment)
    scaled = steps.unsqueeze(1) * inverse.unsqueeze(0)
    sinusoids = torch.cat([torch.sin(scaled), torch.cos(scaled)], 1)
    if dim % 2:
        sinusoids = torch.cat([sinusoids, sinusoids.new_zeros(timesteps, 1)], 1)
    return tensor + sinusoids.unsqueeze(0)
