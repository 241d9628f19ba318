"""AllenNLP's ``Maxout``: layers that each project to ``output_dim * pool_size`` and keep the max of every pool.

Registered as ``maxout`` (and the default), so a model that takes ``FeedForward | Maxout`` (AllenNLP's BCN output
layer) tells the two apart by their keys, as AllenNLP does: ``output_dims`` and ``pool_sizes`` are Maxout's.
The parameter names are AllenNLP's (``_linear_layers.N``), so its weights load with no rename.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import ConfigError, Problem
from distrain.config.lazy import Lazy
from distrain.modules.feedforward import last_layer, per_layer_problems
from distrain.modules.sizes import Widths
from distrain.registry import Registrable

_PER_LAYER = ("output_dims", "pool_sizes", "dropout")


class Maxout(torch.nn.Module, Widths, Registrable):
    """``num_layers`` maxout layers; ``output_dims``, ``pool_sizes`` and ``dropout`` are one value or one per layer."""

    default_implementation = "maxout"
    input_size_key = "input_dim"

    def __init__(self, input_dim: PositiveInt, num_layers: PositiveInt, output_dims: PositiveInt | list[PositiveInt],
                 pool_sizes: PositiveInt | list[PositiveInt], dropout: Probability | list[Probability] = 0.0) -> None:
        super().__init__()
        outputs, pools, drops = (_listed(value, num_layers) for value in (output_dims, pool_sizes, dropout))
        inputs = [input_dim, *outputs[:-1]]
        self._linear_layers = torch.nn.ModuleList(
            torch.nn.Linear(width, output * pool) for width, output, pool in zip(inputs, outputs, pools))
        self._dropout = torch.nn.ModuleList(torch.nn.Dropout(drop) for drop in drops)
        self.output_dims, self.pool_sizes = outputs, pools
        self.input_dim, self.output_dim = input_dim, outputs[-1]

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return per_layer_problems(arguments, _PER_LAYER, arguments["num_layers"])

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None) -> int | None:
        return last_layer(recipe.argument("output_dims"))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        output = inputs
        for layer, width, pool, dropout in zip(self._linear_layers, self.output_dims, self.pool_sizes, self._dropout):
            pooled = layer(output).view(*inputs.shape[:-1], width, pool).max(-1).values
            output = dropout(pooled)
        return output


def _listed(value: Any, layers: int) -> list:
    if isinstance(value, list):
        if len(value) != layers:
            raise ConfigError(f"{len(value)} entries for {layers} layers")
        return value
    return [value] * layers


Maxout.register("maxout")(Maxout)
