"""``allennlp.nn.initializers``: initializers by name and the regex applicator, called as AllenNLP calls them.

distrain's :class:`~distrain.optim.initializers.InitializerApplicator` is the ``model.initializer`` block;
AllenNLP's is built from a list of ``(regex, initializer)`` pairs and called on the model.
"""

from __future__ import annotations

import math

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.modules.augmented_lstm import block_orthogonal as _block_orthogonal
from distrain.optim import initializers as _initializers
from distrain.optim.initializers import Initializer, PretrainedInitializer as PretrainedModelInitializer


class InitializerApplicator(FromParams, _initializers.InitializerApplicator):
    """AllenNLP's ``from_params`` (its ``regexes`` of ``[regex, initializer]`` pairs and ``prevent_regexes``) and
    call on a model."""

    def __call__(self, module: torch.nn.Module) -> list[str]:
        return self.apply(module)


def block_orthogonal(tensor: torch.Tensor, split_sizes: list[int], gain: float = 1.0) -> None:
    """Each ``split_sizes`` block of ``tensor`` (2-d) set to a random orthogonal matrix times ``gain``."""
    if tensor.dim() != 2 or len(split_sizes) != 2:
        from distrain.errors import ConfigError

        raise ConfigError(f"block_orthogonal takes a 2-d tensor and two block sizes, not {list(tensor.shape)} "
                          f"and {split_sizes}")
    if any(size % block for size, block in zip(tensor.shape, split_sizes)):
        from distrain.errors import ConfigError

        raise ConfigError(f"tensor of shape {list(tensor.shape)} does not split into blocks of {split_sizes}")
    with torch.no_grad():
        _block_orthogonal(tensor, tuple(split_sizes))
        tensor.mul_(gain)


def uniform_unit_scaling(tensor: torch.Tensor, nonlinearity: str = "linear") -> torch.Tensor:
    """Uniform values scaled so the output's variance matches the input's: bound ``sqrt(3 / size) * gain``,
    ``size`` (AllenNLP's estimate of the input width) the product of every dimension but the last, which is
    taken to be the output's."""
    size = math.prod(tensor.shape[:-1])
    bound = (3.0 / size) ** 0.5 * torch.nn.init.calculate_gain(nonlinearity)
    with torch.no_grad():
        return tensor.uniform_(-bound, bound)


__all__ = ["Initializer", "InitializerApplicator", "PretrainedModelInitializer", "block_orthogonal",
           "uniform_unit_scaling"]
