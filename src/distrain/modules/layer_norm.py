"""AllenNLP's own ``LayerNorm`` (not torch's): ``gamma * (x - mean) / (std + tiny) + beta``, the standard
deviation the biased one and ``tiny`` 1e-13 (float32), so its saved ``gamma``/``beta`` give its outputs."""

from __future__ import annotations

import torch


class LayerNorm(torch.nn.Module):
    """Normalises the last dimension, as AllenNLP's ``allennlp.modules.LayerNorm``."""

    def __init__(self, dimension: int) -> None:
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(dimension))
        self.beta = torch.nn.Parameter(torch.zeros(dimension))

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        mean = tensor.mean(-1, keepdim=True)
        std = tensor.std(-1, unbiased=False, keepdim=True)
        tiny = 1e-13 if std.dtype != torch.float16 else 1e-4
        return self.gamma * (tensor - mean) / (std + tiny) + self.beta
