"""AllenNLP's ``pytorch_transformer``: ``torch.nn.TransformerEncoder`` layers over the sequence, with
optional sinusoidal or learned positions."""

from __future__ import annotations

import math
from typing import Literal

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2SeqEncoder.register("pytorch_transformer")
class PytorchTransformer(Seq2SeqEncoder):
    """``torch.nn.TransformerEncoder`` layers over the sequence, with optional sinusoidal or learned positions."""

    input_size_key = "input_dim"
    runtime_args = ()  # AllenNLP states input_dim in the config; an owning model may pass it instead

    def __init__(
        self, input_dim: PositiveInt | None = None, num_layers: PositiveInt = 1,
        feedforward_hidden_dim: PositiveInt = 2048, num_attention_heads: PositiveInt = 8,
        positional_encoding: Literal["sinusoidal", "embedding"] | None = None,
        positional_embedding_size: PositiveInt = 512, dropout_prob: Probability = 0.1,
        activation: Literal["relu", "gelu"] = "relu",
    ) -> None:
        super().__init__()
        self.input_dim = self.output_dim = resolve_input_dim(None, input_dim, "input_dim")
        if self.input_dim % num_attention_heads:
            raise ValueError(f"input_dim {self.input_dim} is not divisible by num_attention_heads {num_attention_heads}")
        layer = torch.nn.TransformerEncoderLayer(self.input_dim, num_attention_heads, feedforward_hidden_dim,
                                                 dropout_prob, activation, batch_first=True)
        self.transformer = torch.nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.positional_encoding = positional_encoding
        self.positions = (torch.nn.Embedding(positional_embedding_size, self.input_dim)
                          if positional_encoding == "embedding" else None)

    @classmethod
    def input_dim_problem(cls, encoder: Lazy, input_dim: int) -> str | None:
        heads = encoder.argument("num_attention_heads")
        return f"is not divisible by num_attention_heads ({heads})" if input_dim % heads else None

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim if input_dim is not None else encoder.argument("input_dim")

    def _positions(self, length: int, device: torch.device) -> torch.Tensor:
        if self.positions is not None:
            return self.positions(torch.arange(length, device=device))
        position = torch.arange(length, device=device, dtype=torch.float32).unsqueeze(1)
        scale = torch.exp(torch.arange(0, self.input_dim, 2, device=device).float() * (-math.log(10000.0) / self.input_dim))
        table = torch.zeros(length, self.input_dim, device=device)
        table[:, 0::2] = torch.sin(position * scale)
        table[:, 1::2] = torch.cos(position * scale[: self.input_dim // 2])
        return table

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if self.positional_encoding is not None:
            inputs = inputs + self._positions(inputs.shape[1], inputs.device).to(inputs.dtype)
        output = self.transformer(inputs, src_key_padding_mask=~mask.bool())
        return output * mask.unsqueeze(-1).to(output.dtype)
