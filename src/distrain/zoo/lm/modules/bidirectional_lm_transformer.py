"""``bidirectional_language_model_transformer`` (allennlp-models' Calypso transformer): two pre-norm transformer
stacks over the same inputs (plus sinusoidal positions), one attending only to earlier positions, one only to
later ones, so neither direction sees the token it predicts; their outputs are concatenated.

The layout and parameter names are AllenNLP's, so its archives load. Its masks are kept exactly: a query row of
padding attends nowhere and so averages every position (as AllenNLP does; those rows are padding anyway), and
AllenNLP's own layer norm (``std + 1e-13``) is used. Sinusoidal positions are computed, not saved.
"""

from __future__ import annotations

import copy
import math

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.layer_norm import LayerNorm
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


def sinusoidal_positions(length: int, width: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    position = torch.arange(0, length, device=device).unsqueeze(1).float()
    rates = torch.exp(torch.arange(0, width, 2, device=device).float() * -(math.log(10000.0) / width))
    table = torch.zeros(length, width, device=device)
    table[:, 0::2] = torch.sin(position * rates)
    table[:, 1::2] = torch.cos(position * rates)
    return table.to(dtype)


class MultiHeadedAttention(torch.nn.Module):
    """``linears``: query, key, value and output projections (AllenNLP's order)."""

    def __init__(self, num_heads: int, input_dim: int, dropout: float) -> None:
        super().__init__()
        self.d_k, self.num_heads = input_dim // num_heads, num_heads
        self.linears = torch.nn.ModuleList(torch.nn.Linear(input_dim, input_dim) for _ in range(4))
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch = x.size(0)
        query, key, value = (layer(x).view(batch, -1, self.num_heads, self.d_k).transpose(1, 2)
                             for layer in self.linears[:3])
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        scores = scores.masked_fill(~mask.unsqueeze(1), torch.finfo(scores.dtype).min)
        attended = torch.matmul(self.dropout(torch.softmax(scores, dim=-1)), value)
        return self.linears[3](attended.transpose(1, 2).reshape(batch, -1, self.num_heads * self.d_k))


class PositionwiseFeedForward(torch.nn.Module):
    def __init__(self, input_dim: int, ff_dim: int, dropout: float) -> None:
        super().__init__()
        self.w_1 = torch.nn.Linear(input_dim, ff_dim)
        self.w_2 = torch.nn.Linear(ff_dim, input_dim)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))


class SublayerConnection(torch.nn.Module):
    """``x + dropout(sublayer(norm(x)))``: the norm first."""

    def __init__(self, size: int, dropout: float) -> None:
        super().__init__()
        self.norm = LayerNorm(size)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, sublayer) -> torch.Tensor:
        return x + self.dropout(sublayer(self.norm(x)))


class EncoderLayer(torch.nn.Module):
    def __init__(self, size: int, hidden_dim: int, dropout: float, num_heads: int = 8) -> None:
        super().__init__()
        self.self_attn = MultiHeadedAttention(num_heads, size, dropout)
        self.feed_forward = PositionwiseFeedForward(size, hidden_dim, dropout)
        self.sublayer = torch.nn.ModuleList(SublayerConnection(size, dropout) for _ in range(2))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.sublayer[0](x, lambda normed: self.self_attn(normed, mask))
        return self.sublayer[1](x, self.feed_forward)


class TransformerStack(torch.nn.Module):
    """``num_layers`` copies of one freshly initialised layer (AllenNLP's ``clone``: all start equal), then a norm."""

    def __init__(self, size: int, hidden_dim: int, num_layers: int, dropout: float) -> None:
        super().__init__()
        layer = EncoderLayer(size, hidden_dim, dropout)
        self.layers = torch.nn.ModuleList(copy.deepcopy(layer) for _ in range(num_layers))
        self.norm = LayerNorm(size)
        for parameter in self.parameters():
            if parameter.dim() > 1 and not parameter.is_meta:
                torch.nn.init.xavier_uniform_(parameter)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, all_layers: bool = False) -> torch.Tensor | list[torch.Tensor]:
        """The normed top layer; ``all_layers``: every layer's output, only the last one normed (AllenNLP's)."""
        outputs = []
        for layer in self.layers:
            x = layer(x, mask)
            outputs.append(x)
        outputs[-1] = self.norm(x)
        return outputs if all_layers else outputs[-1]


@Seq2SeqEncoder.register("bidirectional_language_model_transformer")
class BidirectionalLanguageModelTransformer(Seq2SeqEncoder):
    """Output ``2 × input_dim`` wide: the forward stack's vectors, then the backward stack's (8 heads each).
    ``return_all_layers``: a list, each layer's forward and backward outputs concatenated, for ELMo-style mixing
    (the language model embedders); as in AllenNLP only the top layer is normed."""

    input_size_key = "input_dim"
    runtime_args = ()  # AllenNLP states input_dim in the config; an owning model may pass it instead

    def __init__(self, hidden_dim: PositiveInt, num_layers: PositiveInt, input_dim: PositiveInt | None = None,
                 dropout: Probability = 0.1, input_dropout: Probability | None = None,
                 return_all_layers: bool = False) -> None:
        super().__init__()
        self.return_all_layers = return_all_layers
        self.input_dim = resolve_input_dim(input_dim, None, "input_dim")
        self.output_dim = 2 * self.input_dim
        self.num_layers = num_layers
        self.forward_transformer = TransformerStack(self.input_dim, hidden_dim, num_layers, dropout)
        self.backward_transformer = TransformerStack(self.input_dim, hidden_dim, num_layers, dropout)
        self.dropout = torch.nn.Dropout(input_dropout) if input_dropout else torch.nn.Identity()

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        width = encoder.argument("input_dim") or input_dim
        return 2 * width if width else None

    def is_bidirectional(self) -> bool:
        return True

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | list[torch.Tensor]:
        steps = inputs.size(1)
        earlier = torch.tril(torch.ones(steps, steps, device=inputs.device, dtype=torch.bool)).unsqueeze(0)
        forward_mask = mask.bool().unsqueeze(-1) & earlier  # AllenNLP masks query rows of padding
        backward_mask = forward_mask.transpose(1, 2)
        inputs = self.dropout(inputs + sinusoidal_positions(steps, self.input_dim, inputs.dtype, inputs.device))
        forwards = self.forward_transformer(inputs, forward_mask, all_layers=True)
        backwards = self.backward_transformer(inputs, backward_mask, all_layers=True)
        layers = [torch.cat(pair, -1) for pair in zip(forwards, backwards)]
        return layers if self.return_all_layers else layers[-1]
