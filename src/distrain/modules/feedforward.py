"""A stack of linear layers with an activation (and optional dropout) between them."""

from __future__ import annotations

from typing import Literal

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.registry import Registrable

ACTIVATIONS = {
    "relu": torch.nn.ReLU,
    "gelu": torch.nn.GELU,
    "tanh": torch.nn.Tanh,
    "sigmoid": torch.nn.Sigmoid,
    "linear": torch.nn.Identity,
}


class FeedForward(torch.nn.Module, Registrable):
    """``input_dim`` is supplied by the model that owns it, so configs only give the hidden sizes."""

    default_implementation = "feedforward"
    runtime_args = ("input_dim",)

    def __init__(
        self,
        input_dim: int,
        hidden_dims: list[PositiveInt],
        activation: Literal["relu", "gelu", "tanh", "sigmoid", "linear"] = "relu",
        dropout: Probability = 0.0,
    ) -> None:
        super().__init__()
        layers: list[torch.nn.Module] = []
        width = input_dim
        for hidden in hidden_dims:
            layers += [torch.nn.Linear(width, hidden), ACTIVATIONS[activation]()]
            if dropout > 0:
                layers.append(torch.nn.Dropout(dropout))
            width = hidden
        self.layers = torch.nn.Sequential(*layers)
        self.output_dim = width

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.layers(inputs)


FeedForward.register("feedforward")(FeedForward)
