"""AllenNLP's ``ScalarMix``: ``gamma * sum_k softmax(w)_k * layer_k``, a learned weighting of a network's
layers (ELMo's character layer and its two LSTM layers).

With ``do_layer_norm`` each layer is first normalised by the mean and variance of its unmasked
elements, taken over the whole batch at once (not per token), as AllenNLP does.
"""

from __future__ import annotations

import torch

from distrain.config.errors import ConfigError

TINY = 1e-13  # AllenNLP's tiny_value_of_dtype for float32 and float64


class ScalarMix(torch.nn.Module):
    """``initial_scalar_parameters`` are the unnormalised weights ``w`` (zeros by default); with
    ``trainable: false`` they and ``gamma`` stay as given."""

    def __init__(self, mixture_size: int, do_layer_norm: bool = False,
                 initial_scalar_parameters: list[float] | None = None, trainable: bool = True) -> None:
        super().__init__()
        weights = [0.0] * mixture_size if initial_scalar_parameters is None else list(initial_scalar_parameters)
        if len(weights) != mixture_size:
            raise ConfigError(f"{len(weights)} scalar mix parameters given for {mixture_size} layers")
        self.mixture_size, self.do_layer_norm = mixture_size, do_layer_norm
        self.scalar_parameters = torch.nn.ParameterList(
            torch.nn.Parameter(torch.tensor([weight]), requires_grad=trainable) for weight in weights)
        self.gamma = torch.nn.Parameter(torch.tensor([1.0]), requires_grad=trainable)

    def forward(self, tensors: list[torch.Tensor], mask: torch.Tensor | None = None) -> torch.Tensor:
        if len(tensors) != self.mixture_size:
            raise ConfigError(f"{len(tensors)} tensors given to a mix of {self.mixture_size}")
        weights = torch.softmax(torch.cat(list(self.scalar_parameters)), dim=0).split(1)
        if self.do_layer_norm:
            if mask is None:
                raise ValueError("do_layer_norm needs the mask")
            tensors = [_layer_norm(tensor, mask) for tensor in tensors]
        return self.gamma * sum(weight * tensor for weight, tensor in zip(weights, tensors))


def _layer_norm(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    broadcast = mask.unsqueeze(-1)
    count = mask.sum() * tensor.size(-1)
    masked = tensor * broadcast
    mean = masked.sum() / count
    variance = (((masked - mean) * broadcast) ** 2).sum() / count
    return (tensor - mean) / torch.sqrt(variance + TINY)
