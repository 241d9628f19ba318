"""``cnn-highway``: the character CNN of Kim et al. ("Character-aware neural language models") as AllenNLP's
``CnnHighwayEncoder``: convolutions of several widths max-pooled over all characters (the mask is unused: a
token's padding characters are ELMo's padding id, not 0), the activation after the pooling, highway layers and a
projection before or after them, and optionally AllenNLP's layer norm."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, Mapping

import torch
from annotated_types import Len, MinLen

from distrain.config.constraints import NonNegativeInt, PositiveInt
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.highway import Highway
from distrain.modules.layer_norm import LayerNorm
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import resolve_input_dim

_ACTIVATIONS = {"relu": torch.relu, "tanh": torch.tanh}


@Seq2VecEncoder.register("cnn-highway")
class CnnHighwayEncoder(Seq2VecEncoder):
    """``filters``: ``[width, count]`` pairs; ``projection_location`` ``after_cnn`` runs the highways at
    ``projection_dim``, ``after_highway`` at the filters' total (None: after them, as AllenNLP does)."""

    input_size_key = "embedding_dim"
    #: AllenNLP's names (kept from the original ELMo) for the convolutions
    allennlp_names = {r"char_conv_(\d+)": r"convolutions.\1"}

    def __init__(self, filters: Annotated[list[Annotated[list[PositiveInt], Len(2, 2)]], MinLen(1)],
                 num_highway: NonNegativeInt, projection_dim: PositiveInt, input_dim: int | None = None,
                 embedding_dim: PositiveInt | None = None, activation: Literal["relu", "tanh"] = "relu",
                 projection_location: Literal["after_cnn", "after_highway"] | None = "after_highway",
                 do_layer_norm: bool = False) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(embedding_dim, input_dim, "embedding_dim")
        self.output_dim = projection_dim
        self.projection_location = projection_location
        self.activation = _ACTIVATIONS[activation]
        self.convolutions = torch.nn.ModuleList(torch.nn.Conv1d(self.input_dim, count, width) for width, count in filters)
        for conv in self.convolutions:
            if not conv.weight.is_meta:
                torch.nn.init.uniform_(conv.weight, -0.05, 0.05)
                torch.nn.init.zeros_(conv.bias)
        num_filters = sum(count for _, count in filters)
        highway_dim = projection_dim if projection_location == "after_cnn" else num_filters
        self.highways = Highway(highway_dim, num_highway, activation=torch.relu)
        for layer in self.highways.layers:
            if not layer.weight.is_meta:
                with torch.no_grad():
                    layer.weight.normal_(0.0, math.sqrt(1.0 / highway_dim))
                    layer.bias[:highway_dim].fill_(0.0)
                    layer.bias[highway_dim:].fill_(2.0)
        self.projection = torch.nn.Linear(num_filters, projection_dim)
        if not self.projection.weight.is_meta:
            torch.nn.init.normal_(self.projection.weight, 0.0, math.sqrt(1.0 / num_filters))
            torch.nn.init.zeros_(self.projection.bias)
        self.layer_norm = LayerNorm(projection_dim) if do_layer_norm else None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Without a projection the output would be the filters' total, which AllenNLP still reports as
        ``projection_dim``; it is refused rather than mis-sized."""
        if arguments.get("projection_location", "after_highway") is None:
            total = sum(count for _, count in arguments["filters"])
            if total != arguments["projection_dim"]:
                return [Problem("projection_location", f"null leaves the output {total} wide (the filters' "
                                                       f"total), not projection_dim {arguments['projection_dim']}")]
        return []

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("projection_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        inputs = inputs.transpose(1, 2)  # (items, embedding_dim, characters)
        pooled = [self.activation(conv(inputs).max(dim=-1).values) for conv in self.convolutions]
        encoded = torch.cat(pooled, dim=-1)
        if self.projection_location == "after_cnn":
            encoded = self.projection(encoded)
        encoded = self.highways(encoded)
        if self.projection_location == "after_highway":
            encoded = self.projection(encoded)
        return self.layer_norm(encoded) if self.layer_norm is not None else encoded
