"""``ActivationLayer``: a linear map and an activation, BERT's "intermediate" block (and, pooled, its pooler)."""

from __future__ import annotations

from typing import Union

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule


def activation_function(activation: Union[str, torch.nn.Module]) -> torch.nn.Module:
    """A module given as it is; a name is Hugging Face's (``gelu``, ``gelu_new``, ``relu``, ``tanh``...), so a
    layer loaded from a Hugging Face model computes with the very function it was trained with."""
    if not isinstance(activation, str):
        return activation
    from transformers.activations import ACT2FN

    return ACT2FN[activation]


class ActivationLayer(TransformerModule, FromParams):
    """``activation(dense(x))``; with ``pool`` only the first position's vector (BERT's ``[CLS]``) goes in."""

    def __init__(self, hidden_size: int, intermediate_size: int, activation: Union[str, torch.nn.Module],
                 pool: bool = False):
        super().__init__()
        self.dense = torch.nn.Linear(hidden_size, intermediate_size)
        self.act_fn = activation_function(activation)
        self.pool = pool

    def get_output_dim(self) -> int:
        return self.dense.out_features

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if self.pool:
            hidden_states = hidden_states[:, 0]
        return self.act_fn(self.dense(hidden_states))
