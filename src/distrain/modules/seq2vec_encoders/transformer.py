"""A small transformer as a seq2vec encoder: learned positions are added to the token embeddings,
``nn.TransformerEncoder`` layers mix them, and a masked mean pools the result into one vector."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec_encoder import Seq2VecEncoder


@Seq2VecEncoder.register("transformer")
class TransformerSeq2VecEncoder(Seq2VecEncoder):
    """Transformer layers over the embeddings plus learned positions, mean-pooled over real tokens.

    ``input_dim`` (the model's embedding size) is the transformer's width and must be divisible by
    ``num_heads``. Sequences longer than ``max_length`` are an error, not silently cut."""

    def __init__(
        self,
        input_dim: int,
        num_layers: PositiveInt = 2,
        num_heads: PositiveInt = 4,
        feedforward_dim: PositiveInt | None = None,
        dropout: Probability = 0.1,
        max_length: PositiveInt = 512,
    ) -> None:
        super().__init__()
        if input_dim % num_heads:
            raise ValueError(f"input_dim {input_dim} is not divisible by num_heads {num_heads}")
        self.max_length = max_length
        self.positions = torch.nn.Embedding(max_length, input_dim)
        layer = torch.nn.TransformerEncoderLayer(
            input_dim, num_heads, feedforward_dim or 4 * input_dim, dropout, batch_first=True
        )
        # no nested tensors: they change numerics between train and eval and trip on empty rows
        self.layers = torch.nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.input_dim = self.output_dim = input_dim

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim

    @classmethod
    def input_dim_problem(cls, encoder: Lazy, input_dim: int) -> str | None:
        heads = encoder.argument("num_heads")
        return f"is not divisible by the encoder's num_heads ({heads})" if input_dim % heads else None

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        length = inputs.shape[1]
        if length > self.max_length:
            raise ValueError(f"sequence of length {length} is longer than the encoder's max_length {self.max_length}")
        positions = self.positions(torch.arange(length, device=inputs.device))
        encoded = self.layers(inputs + positions, src_key_padding_mask=~mask.bool())
        weights = mask.unsqueeze(-1).to(encoded.dtype)
        return (encoded * weights).sum(1) / weights.sum(1).clamp(min=1.0)
