"""The parts of a T5 block (Raffel et al., 2020): its layer norm, feed-forward projections, the pre-norm residual
wrappers around self-attention, cross-attention and the feed-forward, and the block that chains them.

Every wrapper is ``x + dropout(part(layer_norm(x)))`` (T5 normalises before each part, BERT after). The module
names follow Hugging Face's T5 where the toolkit's differ only in spelling (``SelfAttention`` is
``self_attention``...), so a Hugging Face T5 checkpoint loads through the mappings.
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple, Union

import torch
from torch import nn

from distrain.allennlp.common.checks import ConfigurationError
from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.activation_layer import activation_function
from distrain.allennlp.modules.transformer.attention_module import AttentionOutput, T5Attention
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import FloatT


class T5LayerNorm(TransformerModule, FromParams):
    """T5's layer norm: scaled by the root mean square, no mean subtracted, no bias (computed in float32)."""

    def __init__(self, hidden_size: int = 512, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in (torch.float16, torch.bfloat16):
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


def _t5_linear(size_in: int, size_out: int) -> nn.Linear:
    """A bias-free linear map with T5's initialisation (normal, scaled by the input width)."""
    layer = nn.Linear(size_in, size_out, bias=False)
    layer.weight.data.normal_(mean=0.0, std=size_in ** -0.5)
    return layer


class T5FeedForwardProjection(TransformerModule, FromParams):
    """The feed-forward inside a T5 block; ``by_name`` gives the kind a Hugging Face config's ``feed_forward_proj``
    names. The kinds are looked up here rather than in distrain's registry: no distrain config names them, and
    the toolkit loads only when a user imports it."""

    @staticmethod
    def by_name(name: str) -> type:
        if name not in _PROJECTIONS:
            raise ConfigurationError(f"unknown T5 feed-forward projection {name!r}; choose one of: "
                                     f"{', '.join(_PROJECTIONS)}")
        return _PROJECTIONS[name]

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class _T5Dense(T5FeedForwardProjection):
    """The linear maps of a T5 feed-forward: one per name in ``_inputs`` from the model's width to ``ff_size``
    (created in that order, so a seed gives AllenNLP's weights), and ``wo`` back."""

    _inputs: Tuple[str, ...] = ()

    def __init__(self, hidden_size: int = 512, ff_size: int = 2048, dropout: float = 0.1):
        super().__init__()
        for name in self._inputs:
            setattr(self, name, _t5_linear(hidden_size, ff_size))
        self.wo = _t5_linear(ff_size, hidden_size)
        self.dropout = nn.Dropout(dropout)


class T5DenseReluDense(_T5Dense):
    """``wo(dropout(relu(wi(x))))``: the original T5's."""

    _inputs = ("wi",)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.wo(self.dropout(torch.relu(self.wi(hidden_states))))


class T5DenseGatedGeluDense(_T5Dense):
    """``wo(dropout(gelu(wi_0(x)) * wi_1(x)))``: T5 v1.1's gated form (with the tanh approximation of gelu)."""

    _inputs = ("wi_0", "wi_1")

    def __init__(self, hidden_size: int = 512, ff_size: int = 2048, dropout: float = 0.1):
        super().__init__(hidden_size, ff_size, dropout)
        self.gelu_act = activation_function("gelu_new")

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.wo(self.dropout(self.gelu_act(self.wi_0(hidden_states)) * self.wi_1(hidden_states)))


_PROJECTIONS = {"relu": T5DenseReluDense, "gated-gelu": T5DenseGatedGeluDense}


class T5LayerFF(TransformerModule, FromParams):
    """``x + dropout(ff_proj(layer_norm(x)))``."""

    _pretrained_mapping = {"DenseReluDense": "ff_proj"}

    def __init__(self, ff_proj: Optional[T5FeedForwardProjection] = None, layer_norm: Optional[T5LayerNorm] = None,
                 dropout: float = 0.1):
        super().__init__()
        self.ff_proj = ff_proj or T5DenseReluDense()
        self.layer_norm = layer_norm or T5LayerNorm()
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return hidden_states + self.dropout(self.ff_proj(self.layer_norm(hidden_states)))


class T5LayerSelfAttentionOutput(NamedTuple):
    hidden_states: FloatT
    attn_key_value_state: Optional[Tuple[FloatT, FloatT]]
    attn_position_bias: FloatT
    attn_weights: Optional[FloatT] = None


# the cross-attention wrapper returns the same four things
T5LayerCrossAttentionOutput = T5LayerSelfAttentionOutput


class _PreNormAttention(TransformerModule, FromParams):
    """``x + dropout(attention(layer_norm(x)))``, the attention held under the subclass's ``_attention_name``."""

    _attention_name = ""

    def _attention(self) -> T5Attention:
        return getattr(self, self._attention_name)

    @property
    def hidden_size(self) -> int:
        return self._attention().hidden_size

    def _attend(self, hidden_states: torch.Tensor, **arguments) -> T5LayerSelfAttentionOutput:
        attended: AttentionOutput = self._attention()(self.layer_norm(hidden_states), **arguments)
        return T5LayerSelfAttentionOutput(hidden_states + self.dropout(attended.hidden_states),
                                          attended.key_value_state, attended.position_bias, attended.attention_probs)


class T5LayerSelfAttention(_PreNormAttention):
    _pretrained_mapping = {"SelfAttention": "self_attention"}
    _attention_name = "self_attention"

    def __init__(self, self_attention: Optional[T5Attention] = None, layer_norm: Optional[T5LayerNorm] = None,
                 dropout: float = 0.1, has_relative_attention_bias: bool = False):
        super().__init__()
        self.self_attention = self_attention or T5Attention(has_relative_attention_bias=has_relative_attention_bias)
        self.layer_norm = layer_norm or T5LayerNorm(hidden_size=self.self_attention.hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states: FloatT, attention_mask: Optional[torch.BoolTensor] = None,
                position_bias: Optional[torch.Tensor] = None, layer_head_mask: Optional[torch.BoolTensor] = None,
                past_key_value: Optional[Tuple[FloatT, FloatT]] = None, use_cache: bool = False,
                output_attentions: bool = False) -> T5LayerSelfAttentionOutput:
        return self._attend(hidden_states, mask=attention_mask, position_bias=position_bias,
                            layer_head_mask=layer_head_mask, past_key_value=past_key_value, use_cache=use_cache,
                            output_attentions=output_attentions)


class T5LayerCrossAttention(_PreNormAttention):
    _pretrained_mapping = {"EncDecAttention": "enc_dec_attention"}
    _attention_name = "enc_dec_attention"

    def __init__(self, enc_dec_attention: Optional[T5Attention] = None, layer_norm: Optional[T5LayerNorm] = None,
                 dropout: float = 0.1):
        super().__init__()
        self.enc_dec_attention = enc_dec_attention or T5Attention(is_decoder=True, has_relative_attention_bias=False,
                                                                  is_cross_attention=True)
        self.layer_norm = layer_norm or T5LayerNorm(hidden_size=self.enc_dec_attention.hidden_size)
        self.dropout = nn.Dropout(dropout)

    def forward(self, hidden_states: FloatT, key_value_states: Optional[FloatT],
                attention_mask: Optional[torch.BoolTensor] = None, position_bias: Optional[FloatT] = None,
                layer_head_mask: Optional[torch.BoolTensor] = None,
                past_key_value: Optional[Tuple[FloatT, FloatT]] = None, use_cache: bool = False,
                query_length: Optional[int] = None, output_attentions: bool = False) -> T5LayerCrossAttentionOutput:
        return self._attend(hidden_states, mask=attention_mask, key_value_states=key_value_states,
                            position_bias=position_bias, layer_head_mask=layer_head_mask,
                            past_key_value=past_key_value, use_cache=use_cache, query_length=query_length,
                            output_attentions=output_attentions)


#: a block's cache: self-attention's (key, value), then cross-attention's in a decoder
KeyValueStates = Union[Tuple[FloatT, FloatT], Tuple[FloatT, FloatT, FloatT, FloatT]]


class T5BlockOutput(NamedTuple):
    hidden_states: FloatT
    present_key_value_states: Optional[KeyValueStates]
    self_attn_weights: Optional[FloatT]
    self_attn_position_bias: Optional[FloatT]
    cross_attn_weights: Optional[FloatT] = None
    cross_attn_position_bias: Optional[FloatT] = None


def _clamp_inf(states: torch.Tensor) -> torch.Tensor:
    """Half precision can overflow to inf in a residual sum; T5 clamps it back to the largest finite value."""
    if torch.isinf(states).any():
        limit = torch.finfo(states.dtype).max - 1000
        states = torch.clamp(states, min=-limit, max=limit)
    return states


class T5Block(TransformerModule, FromParams):
    """Self-attention, cross-attention (a decoder's block only) and the feed-forward, in ``layer``."""

    def __init__(self, attention: Optional[T5LayerSelfAttention] = None,
                 cross_attention: Optional[T5LayerCrossAttention] = None, ff: Optional[T5LayerFF] = None):
        super().__init__()
        self.layer = nn.ModuleList([attention or T5LayerSelfAttention()])
        self.is_decoder = cross_attention is not None
        if cross_attention is not None:
            self.layer.append(cross_attention)
        self.layer.append(ff or T5LayerFF())

    @property
    def hidden_size(self) -> int:
        return self.layer[0].hidden_size

    def forward(self, hidden_states: FloatT, attention_mask: Optional[torch.BoolTensor] = None,
                position_bias: Optional[FloatT] = None, encoder_hidden_states: Optional[FloatT] = None,
                encoder_attention_mask: Optional[torch.BoolTensor] = None,
                encoder_decoder_position_bias: Optional[FloatT] = None,
                layer_head_mask: Optional[torch.BoolTensor] = None,
                encoder_layer_head_mask: Optional[torch.BoolTensor] = None,
                past_key_value: Optional[KeyValueStates] = None, use_cache: bool = False,
                output_attentions: bool = False) -> T5BlockOutput:
        """``past_key_value`` (a decoder's, while decoding step by step) holds 2 tensors, 4 with an encoder."""
        if past_key_value is not None:
            assert self.is_decoder, "Only decoder can use `past_key_values`"
            expected = 2 if encoder_hidden_states is None else 4
            assert len(past_key_value) == expected, (f"There should be {expected} past states (key and value per "
                                                     f"attention). Got {len(past_key_value)} past key / value states")
        attended = self.layer[0](hidden_states, attention_mask=attention_mask, position_bias=position_bias,
                                 layer_head_mask=layer_head_mask,
                                 past_key_value=None if past_key_value is None else past_key_value[:2],
                                 use_cache=use_cache, output_attentions=output_attentions)
        hidden_states, cache = _clamp_inf(attended.hidden_states), attended.attn_key_value_state
        crossed = None
        if self.is_decoder and encoder_hidden_states is not None:
            crossed = self.layer[1](hidden_states, key_value_states=encoder_hidden_states,
                                    attention_mask=encoder_attention_mask, position_bias=encoder_decoder_position_bias,
                                    layer_head_mask=encoder_layer_head_mask,
                                    past_key_value=None if past_key_value is None else past_key_value[2:],
                                    query_length=None if cache is None else cache[0].shape[2], use_cache=use_cache,
                                    output_attentions=output_attentions)
            hidden_states = _clamp_inf(crossed.hidden_states)
            if cache is not None and crossed.attn_key_value_state is not None:
                cache = cache + crossed.attn_key_value_state
        hidden_states = _clamp_inf(self.layer[-1](hidden_states))
        return T5BlockOutput(hidden_states, cache, attended.attn_weights, attended.attn_position_bias,
                             None if crossed is None else crossed.attn_weights,
                             None if crossed is None else crossed.attn_position_bias)
