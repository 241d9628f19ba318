"""``stacked_self_attention``: a pre-norm transformer decoder (Vaswani et al. 2017 as allennlp-models built it):
each layer attends to the earlier target positions, then to the source, then a feedforward, every sublayer
``x + dropout(f(norm(x)))``, and a final norm.

Inputs are scaled by ``sqrt(decoding_dim)`` and get sinusoidal positions (computed, not saved). It decodes in
parallel: teacher forcing runs it once over the whole target, and a beam step runs it over every token decoded
so far and keeps the last position. Parameter names are AllenNLP's, so its archives load.
"""

from __future__ import annotations

import copy
import math

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.modules.layer_norm import LayerNorm
from distrain.zoo.lm.modules.bidirectional_lm_transformer import (PositionwiseFeedForward, SublayerConnection,
                                                                  sinusoidal_positions)
from distrain.zoo.seq2seq.modules.decoder_nets.decoder_net import DecoderNet


class MultiHeadedAttention(torch.nn.Module):
    """Queries from one sequence, keys and values from another (or the same); ``linears`` are the query, key,
    value and output projections, in AllenNLP's order. A masked position scores -1e9, as AllenNLP's."""

    def __init__(self, num_heads: int, input_dim: int, dropout: float) -> None:
        super().__init__()
        if input_dim % num_heads:
            raise ValueError(f"decoding_dim {input_dim} is not a multiple of num_attention_heads {num_heads}")
        self.d_k, self.num_heads = input_dim // num_heads, num_heads
        self.linears = torch.nn.ModuleList(torch.nn.Linear(input_dim, input_dim) for _ in range(4))
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        batch = query.size(0)
        query, key, value = (layer(x).view(batch, -1, self.num_heads, self.d_k).transpose(1, 2)
                             for layer, x in zip(self.linears[:3], (query, key, value)))
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        scores = scores.masked_fill(~mask.unsqueeze(1).bool(), -1e9)
        attended = torch.matmul(self.dropout(torch.softmax(scores, dim=-1)), value)
        return self.linears[3](attended.transpose(1, 2).reshape(batch, -1, self.num_heads * self.d_k))


class DecoderLayer(torch.nn.Module):
    def __init__(self, size: int, self_attn: MultiHeadedAttention, src_attn: MultiHeadedAttention,
                 feed_forward: PositionwiseFeedForward, dropout: float) -> None:
        super().__init__()
        self.size = size
        self.self_attn, self.src_attn, self.feed_forward = self_attn, src_attn, feed_forward
        self.sublayer = torch.nn.ModuleList(SublayerConnection(size, dropout) for _ in range(3))

    def forward(self, x: torch.Tensor, memory: torch.Tensor, source_mask: torch.Tensor,
                target_mask: torch.Tensor) -> torch.Tensor:
        x = self.sublayer[0](x, lambda y: self.self_attn(y, y, y, target_mask))
        x = self.sublayer[1](x, lambda y: self.src_attn(y, memory, memory, source_mask))
        return self.sublayer[2](x, self.feed_forward)


class Decoder(torch.nn.Module):
    """``num_layers`` copies of one layer (all start equal, as AllenNLP's ``clone``), then a norm."""

    def __init__(self, layer: DecoderLayer, num_layers: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.norm = LayerNorm(layer.size)

    def forward(self, x: torch.Tensor, memory: torch.Tensor, source_mask: torch.Tensor,
                target_mask: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, memory, source_mask, target_mask)
        return self.norm(x)


def causal_mask(steps: int, device: torch.device) -> torch.Tensor:
    """``(1, steps, steps)``: position ``i`` sees positions ``0..i``."""
    return torch.ones(steps, steps, dtype=torch.bool, device=device).tril().unsqueeze(0)


@DecoderNet.register("stacked_self_attention")
class StackedSelfAttentionDecoderNet(DecoderNet):
    """A pre-norm transformer decoder net: self-attention over the earlier target positions, attention to the
    source, a feedforward."""

    def __init__(self, decoding_dim: PositiveInt, target_embedding_dim: PositiveInt,
                 feedforward_hidden_dim: PositiveInt, num_layers: PositiveInt, num_attention_heads: PositiveInt,
                 use_positional_encoding: bool = True, positional_encoding_max_steps: PositiveInt = 5000,
                 dropout_prob: Probability = 0.1, residual_dropout_prob: Probability = 0.2,
                 attention_dropout_prob: Probability = 0.1) -> None:
        super().__init__(decoding_dim, target_embedding_dim, decodes_parallel=True)
        attention = MultiHeadedAttention(num_attention_heads, decoding_dim, attention_dropout_prob)
        feed_forward = PositionwiseFeedForward(decoding_dim, feedforward_hidden_dim, dropout_prob)
        self.embed_scale = math.sqrt(decoding_dim)
        self.use_positional_encoding = use_positional_encoding
        self.positional_encoding_max_steps = positional_encoding_max_steps
        self.dropout = torch.nn.Dropout(dropout_prob)
        self.self_attention = Decoder(DecoderLayer(decoding_dim, copy.deepcopy(attention), copy.deepcopy(attention),
                                                   feed_forward, residual_dropout_prob), num_layers)

    def init_decoder_state(self, encoder_out: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {}

    def forward(self, previous_state: dict[str, torch.Tensor], encoder_outputs: torch.Tensor,
                source_mask: torch.Tensor, previous_steps_predictions: torch.Tensor,
                previous_steps_mask: torch.Tensor | None = None) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        steps = previous_steps_predictions.size(-2)
        if steps > self.positional_encoding_max_steps:
            raise ValueError(f"{steps} decoding steps exceed positional_encoding_max_steps "
                             f"{self.positional_encoding_max_steps}")
        future = causal_mask(steps, encoder_outputs.device)
        target_mask = future if previous_steps_mask is None else previous_steps_mask.bool().unsqueeze(-2) & future
        x = previous_steps_predictions * self.embed_scale
        if self.use_positional_encoding:
            x = x + sinusoidal_positions(steps, x.size(-1), x.dtype, x.device).unsqueeze(0)
        decoded = self.self_attention(self.dropout(x), encoder_outputs, source_mask.bool().unsqueeze(-2), target_mask)
        return {}, decoded
