"""``Activation``: activation functions by name, as AllenNLP's ``Activation.by_name("relu")()`` builds them.

Each registered name is a plain ``torch.nn`` module class (``linear`` is the identity), so a model that builds its
activation from a config gets a torch module it can call.
"""

from __future__ import annotations

import torch

from distrain.registry import Registrable


class Activation(torch.nn.Module, Registrable):
    """A function applied elementwise; the registered kinds are torch's own modules."""

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


_TORCH_ACTIVATIONS = {
    "relu": torch.nn.ReLU, "relu6": torch.nn.ReLU6, "elu": torch.nn.ELU, "gelu": torch.nn.GELU,
    "prelu": torch.nn.PReLU, "leaky_relu": torch.nn.LeakyReLU, "threshold": torch.nn.Threshold,
    "hardtanh": torch.nn.Hardtanh, "sigmoid": torch.nn.Sigmoid, "tanh": torch.nn.Tanh,
    "log_sigmoid": torch.nn.LogSigmoid, "softplus": torch.nn.Softplus, "softshrink": torch.nn.Softshrink,
    "softsign": torch.nn.Softsign, "tanhshrink": torch.nn.Tanhshrink, "selu": torch.nn.SELU,
    "swish": torch.nn.SiLU, "mish": torch.nn.Mish, "linear": torch.nn.Identity,
}
for _name, _module in _TORCH_ACTIVATIONS.items():
    Activation.register(_name)(_module)
