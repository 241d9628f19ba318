"""A stack of linear layers with an activation (and optional dropout) after each.

Both distrain's short form (``hidden_dims`` list, one ``activation``) and AllenNLP's (``input_dim``,
``num_layers``, ``hidden_dims`` and ``activations`` and ``dropout`` as one value or one per layer) are
accepted. ``input_dim`` is passed by the owning model or stated in the config; both must agree.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.sizes import Widths
from distrain.registry import Registrable

ACTIVATIONS = {
    "relu": torch.nn.ReLU,
    "gelu": torch.nn.GELU,
    "tanh": torch.nn.Tanh,
    "sigmoid": torch.nn.Sigmoid,
    "linear": torch.nn.Identity,
    # AllenNLP's further names (its ``activations`` key)
    "elu": torch.nn.ELU,
    "leaky_relu": torch.nn.LeakyReLU,
    "selu": torch.nn.SELU,
    "softplus": torch.nn.Softplus,
    "swish": torch.nn.SiLU,
    "silu": torch.nn.SiLU,
    "mish": torch.nn.Mish,
    "relu6": torch.nn.ReLU6,
}
Activation = Literal[tuple(ACTIVATIONS)]  # type: ignore[valid-type]
#: distrain's own ``activation`` key keeps its original five
ShortActivation = Literal["relu", "gelu", "tanh", "sigmoid", "linear"]


class FeedForward(torch.nn.Module, Widths, Registrable):
    """A stack of linear layers, each followed by an activation and optional dropout."""

    default_implementation = "feedforward"
    runtime_args = ()  # input_dim: passed by the owning model, or stated as AllenNLP configs do
    input_size_key = "input_dim"

    def __init__(
        self,
        hidden_dims: PositiveInt | list[PositiveInt],
        input_dim: PositiveInt | None = None,
        activation: ShortActivation = "relu",
        dropout: Probability | list[Probability] = 0.0,
        num_layers: PositiveInt | None = None,
        activations: Activation | list[Activation] | None = None,
    ) -> None:
        super().__init__()
        if input_dim is None:
            raise ValueError("input_dim is needed: nothing passes this feedforward its input width")
        widths = _per_layer(hidden_dims, num_layers, "hidden_dims")
        kinds = _per_layer(activations if activations is not None else activation, len(widths), "activations")
        drops = _per_layer(dropout, len(widths), "dropout")
        layers: list[torch.nn.Module] = []
        width = input_dim
        for hidden, kind, drop in zip(widths, kinds, drops):
            layers += [torch.nn.Linear(width, hidden), _activation(kind)]
            if drop > 0:
                layers.append(torch.nn.Dropout(drop))
            width = hidden
        self.layers = torch.nn.Sequential(*layers)
        #: AllenNLP keeps the linear layers in a list of their own (see :mod:`distrain.experiment.archive.allennlp`)
        self.allennlp_names = {rf"_linear_layers\.{number}": f"layers.{position}" for number, position in
                               enumerate(i for i, layer in enumerate(layers) if isinstance(layer, torch.nn.Linear))}
        self.input_dim = input_dim
        self.output_dim = width

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Per-layer lists must have ``num_layers`` entries (or as many as ``hidden_dims``)."""
        layers = arguments["num_layers"]
        if layers is None and isinstance(arguments["hidden_dims"], list):
            layers = len(arguments["hidden_dims"])
        if layers is None:
            return [Problem("num_layers", "missing: hidden_dims is one number, so say how many layers")]
        return per_layer_problems(arguments, ("hidden_dims", "activations", "dropout"), layers)

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None) -> int | None:
        return last_layer(recipe.argument("hidden_dims"))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.layers(inputs)


def per_layer_problems(arguments: Mapping[str, Any], keys: tuple[str, ...], layers: int) -> list[Problem]:
    """The arguments among ``keys`` (each one value for every layer, or a list of one per layer) whose list is
    not ``layers`` long."""
    return [Problem(key, f"has {len(value)} entries for {layers} layers")
            for key in keys if isinstance(value := arguments[key], list) and len(value) != layers]


def _activation(kind: Any) -> torch.nn.Module:
    """A named activation, or one given as a module (AllenNLP's ``Activation.by_name("relu")()``) or function."""
    if isinstance(kind, str):
        return ACTIVATIONS[kind]()
    return kind if isinstance(kind, torch.nn.Module) else _Applied(kind)


class _Applied(torch.nn.Module):
    def __init__(self, function: Any) -> None:
        super().__init__()
        self.function = function

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.function(inputs)


def last_layer(value: Any) -> Any:
    """The last layer's entry of a per-layer argument (one value for every layer, or a list of one per layer)."""
    return value[-1] if isinstance(value, list) else value


def _per_layer(value: Any, layers: int | None, key: str) -> list[Any]:
    if isinstance(value, list):
        if layers is not None and len(value) != layers:
            raise ValueError(f"{key} has {len(value)} entries for {layers} layers")
        return value
    if layers is None:
        raise ValueError(f"{key} is one value, so num_layers is needed")
    return [value] * layers


FeedForward.register("feedforward")(FeedForward)
