"""AllenNLP's ``GatedSum``: ``g * a + (1 - g) * b`` with a gate ``g = sigmoid(w · [a; b] + c)`` per position (the
coreference model's update of a span's vector by its likely antecedents)."""

from __future__ import annotations

import torch


class GatedSum(torch.nn.Module):
    def __init__(self, input_dim: int) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.gate = torch.nn.Linear(input_dim * 2, 1)

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.input_dim

    def forward(self, input_a: torch.Tensor, input_b: torch.Tensor) -> torch.Tensor:
        if input_a.shape != input_b.shape or input_a.shape[-1] != self.input_dim:
            raise ValueError(f"GatedSum takes two inputs of the same shape, {self.input_dim} wide; got "
                             f"{tuple(input_a.shape)} and {tuple(input_b.shape)}")
        gate = torch.sigmoid(self.gate(torch.cat([input_a, input_b], -1)))
        return gate * input_a + (1 - gate) * input_b
