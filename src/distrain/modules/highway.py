"""AllenNLP's ``Highway`` layers: ``y = g * x + (1 - g) * f(A x)`` with a gate ``g = sigmoid(B x)``.

One linear layer per step gives ``A x`` and ``B x`` together (its output is twice the input width), the
layout AllenNLP's pretrained ELMo weights are loaded into.
"""

from __future__ import annotations

from typing import Callable

import torch


class Highway(torch.nn.Module):
    """The gate's bias starts at 1, so a fresh layer mostly carries its input through."""

    def __init__(self, input_dim: int, num_layers: int = 1,
                 activation: Callable[[torch.Tensor], torch.Tensor] = torch.nn.functional.relu) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(input_dim, input_dim * 2) for _ in range(num_layers))
        self.activation = activation
        for layer in self.layers:
            if not layer.bias.is_meta:
                with torch.no_grad():
                    layer.bias[input_dim:].fill_(1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        current = inputs
        for layer in self.layers:
            nonlinear, gate = layer(current).chunk(2, dim=-1)
            gate = torch.sigmoid(gate)
            current = gate * current + (1 - gate) * self.activation(nonlinear)
        return current
