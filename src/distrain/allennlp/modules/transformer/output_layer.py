"""``OutputLayer``: the residual block that closes each half of a BERT layer."""

from __future__ import annotations

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.layer_norm import LayerNorm
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule


class OutputLayer(TransformerModule, FromParams):
    """``layer_norm(dropout(dense(x)) + residual)``."""

    _pretrained_mapping = {"LayerNorm": "layer_norm"}

    def __init__(self, input_size: int, hidden_size: int, dropout: float):
        super().__init__()
        self.dense = torch.nn.Linear(input_size, hidden_size)
        self.layer_norm = LayerNorm(hidden_size, eps=1e-12)
        self.dropout = torch.nn.Dropout(dropout)

    def get_output_dim(self) -> int:
        return self.dense.out_features

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.layer_norm(self.dropout(self.dense(hidden_states)) + input_tensor)
