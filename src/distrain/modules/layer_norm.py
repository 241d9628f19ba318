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


class MaskedLayerNorm(torch.nn.Module):
    """AllenNLP's ``MaskedLayerNorm``: one mean and standard deviation over every unmasked element of the batch,
    ``gamma * (x - mean) / (std + tiny) + beta``, ``gamma`` starting at ``gamma0``."""

    def __init__(self, size: int, gamma0: float = 0.1) -> None:
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.ones(1, 1, size) * gamma0)
        self.beta = torch.nn.Parameter(torch.zeros(1, 1, size))
        self.size = size

    def forward(self, tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        broadcast = mask.unsqueeze(-1).to(tensor.dtype)
        count = broadcast.sum() * self.size
        mean = (tensor * broadcast).sum() / count
        tiny = 1e-13 if tensor.dtype != torch.float16 else 1e-4
        std = torch.sqrt((((tensor - mean) * broadcast) ** 2).sum() / count + tiny)
        return self.gamma * (tensor - mean) / (std + tiny) + self.beta
