"""The toolkit's multi-head attention: ``AttentionModule`` and its BERT (``SelfAttention``) and T5 (``T5Attention``)
forms.

One module serves self-attention, cross-attention (keys and values from ``source_states``, an encoder's output) and
decoding with a cache of past keys and values. Scores come from a registered matrix attention (``scoring_func``:
BERT scales its dot products, T5 does not), and a position bias is added to them: T5's learned relative-position
buckets, or zeros. The mask goes into that bias, so the bias handed on to the next layer (T5 computes it once per
stack) is already masked, and a bias handed in is used as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import torch
import torch.nn.functional as F

from distrain.allennlp.common.checks import ConfigurationError
from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import FloatT, apply_mask, attend, split_heads
from distrain.allennlp.modules.matrix_attention import MatrixAttention  # with every kind registered


@dataclass
class AttentionOutput:
    """What an attention returns: the attended states, the (key, value) pair a decoder caches, the masked position
    bias, and the attention probabilities when asked for."""

    hidden_states: FloatT
    key_value_state: Optional[Tuple[FloatT, FloatT]] = None
    position_bias: Optional[FloatT] = None
    attention_probs: Optional[FloatT] = None


def relative_position_bucket(relative_position: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32,
                             max_distance: int = 128) -> torch.Tensor:
    """T5's bucket of each key-minus-query distance: exact buckets for short distances, logarithmically wider ones
    up to ``max_distance`` (everything beyond shares the last). Bidirectional attention gives half the buckets to
    keys after the query; a decoder's (causal) attention only has distances to earlier keys."""
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp(min=0)
    exact = num_buckets // 2
    scale = (num_buckets - exact) / math.log(max_distance / exact)
    far = exact + (torch.log(distance.float() / exact) * scale).long()
    far = far.clamp(max=num_buckets - 1)
    return buckets + torch.where(distance < exact, distance, far)


class AttentionModule(TransformerModule, FromParams):
    """Multi-head attention with a choice of scoring, an optional output projection, an optional relative
    position bias and, in a decoder, cross-attention and a key/value cache."""

    def __init__(self, hidden_size: int = 512, attention_head_size: int = 64, num_attention_heads: int = 8,
                 scoring_func: str = "scaled_dot_product", output_linear: bool = False, dropout: float = 0.0,
                 bias: bool = True, normalize_weights: bool = False, is_decoder: bool = False,
                 is_cross_attention: bool = False, relative_attention_num_buckets: Optional[int] = None):
        super().__init__()
        if hidden_size % num_attention_heads != 0:
            raise ConfigurationError(f"The hidden size ({hidden_size}) is not a multiple of the number of "
                                     f"attention heads ({num_attention_heads})")
        if is_cross_attention and not is_decoder:
            raise ConfigurationError("The attention layer can be a cross-attention layer only if it is within a "
                                     "decoder.")
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = attention_head_size
        self.all_head_size = num_attention_heads * attention_head_size
        self.query = torch.nn.Linear(hidden_size, self.all_head_size, bias=bias)
        self.key = torch.nn.Linear(hidden_size, self.all_head_size, bias=bias)
        self.value = torch.nn.Linear(hidden_size, self.all_head_size, bias=bias)
        if output_linear:
            self.output = torch.nn.Linear(self.all_head_size, hidden_size, bias=bias)
        self.scoring_func = scoring_func
        self.attn = MatrixAttention.by_name(scoring_func)()
        self.relative_attention_num_buckets = relative_attention_num_buckets
        if relative_attention_num_buckets is not None:
            self.relative_attention_bias = torch.nn.Embedding(relative_attention_num_buckets, num_attention_heads)
        self.dropout = dropout
        self.is_decoder = is_decoder
        self.is_cross_attention = is_cross_attention
        if normalize_weights:
            self._normalize()

    def _normalize(self) -> None:
        """T5's initialisation (Mesh TensorFlow's): normal weights scaled by the widths they are summed over."""
        width, heads, head = self.hidden_size, self.num_attention_heads, self.attention_head_size
        self.query.weight.data.normal_(mean=0.0, std=(width * head) ** -0.5)
        self.key.weight.data.normal_(mean=0.0, std=width ** -0.5)
        self.value.weight.data.normal_(mean=0.0, std=width ** -0.5)
        if hasattr(self, "output"):
            self.output.weight.data.normal_(mean=0.0, std=(heads * head) ** -0.5)
        if hasattr(self, "relative_attention_bias"):
            self.relative_attention_bias.weight.data.normal_(mean=0.0, std=width ** -0.5)

    def _heads(self, states: torch.Tensor) -> torch.Tensor:
        return split_heads(states, self.num_attention_heads, self.attention_head_size)

    def _keys_or_values(self, layer: torch.nn.Linear, query_states: torch.Tensor,
                        source_states: Optional[torch.Tensor], past: Optional[torch.Tensor]) -> torch.Tensor:
        """Self-attention projects the queries' states (after a cache's past ones); cross-attention projects the
        source once, and a cache holds that projection for the later steps."""
        if source_states is None:
            projected = self._heads(layer(query_states))
            return projected if past is None else torch.cat([past, projected], dim=2)
        return self._heads(layer(source_states)) if past is None else past

    def compute_bias(self, query_length: int, key_length: int) -> torch.Tensor:
        """The learned bias of every query-key distance, ``(1, heads, query_length, key_length)``."""
        device = self.relative_attention_bias.weight.device
        distance = (torch.arange(key_length, device=device)[None, :]
                    - torch.arange(query_length, device=device)[:, None])
        buckets = relative_position_bucket(distance, bidirectional=not self.is_decoder,
                                           num_buckets=self.relative_attention_num_buckets)
        return self.relative_attention_bias(buckets).permute(2, 0, 1).unsqueeze(0)

    def _fresh_bias(self, scores: torch.Tensor, query_length: int, real_length: int,
                    has_past: bool) -> torch.Tensor:
        if self.relative_attention_num_buckets is not None:
            bias = self.compute_bias(real_length, scores.shape[-1])
        else:
            bias = scores.new_zeros((1, self.num_attention_heads, real_length, scores.shape[-1]))
        # with a cache, only the newest queries are scored
        return bias[:, :, -query_length:, :] if has_past else bias

    def forward(self, query_states: torch.Tensor, past_key_states: Optional[torch.Tensor] = None,
                past_value_states: Optional[torch.Tensor] = None,
                attention_mask: Optional[torch.BoolTensor] = None, source_states: Optional[torch.Tensor] = None,
                source_attention_mask: Optional[torch.BoolTensor] = None, head_mask: Optional[torch.Tensor] = None,
                position_bias: Optional[torch.Tensor] = None, output_attentions: bool = False,
                use_cache: bool = False, query_length: Optional[int] = None) -> AttentionOutput:
        """``query_states`` ``(batch, length, hidden)`` attended over themselves or over ``source_states``;
        masks are 1 where attended (see :func:`~distrain.allennlp.modules.transformer.util.apply_mask`)."""
        query = self._heads(self.query(query_states))
        key = self._keys_or_values(self.key, query_states, source_states, past_key_states)
        value = self._keys_or_values(self.value, query_states, source_states, past_value_states)
        mask = source_attention_mask if self.is_cross_attention else attention_mask
        scores = self.attn(query, key)
        if position_bias is None:
            length = query_states.shape[1]
            real_length = length
            if past_key_states is not None:
                real_length += past_key_states.shape[2] if query_length is None else query_length
            position_bias = self._fresh_bias(scores, length, real_length, past_key_states is not None)
            if mask is not None:
                position_bias = apply_mask(position_bias, mask)
        probabilities = F.dropout(torch.softmax(scores + position_bias, dim=-1), p=self.dropout,
                                  training=self.training)
        if head_mask is not None:
            probabilities = probabilities * head_mask
        context = attend(probabilities, value)
        if hasattr(self, "output"):
            context = self.output(context)
        cached = (key, value) if self.is_decoder and use_cache else None
        return AttentionOutput(context, cached, position_bias, probabilities if output_attentions else None)


class T5Attention(AttentionModule):
    """T5's attention: unscaled dot products, no biases, an output projection, the relative position bias in the
    layers that have one."""

    _pretrained_relevant_module = ["encoder.block.0.layer.0.SelfAttention"]
    _pretrained_mapping = {"q": "query", "k": "key", "v": "value", "o": "output"}

    def __init__(self, is_decoder: bool = False, hidden_size: int = 512, key_value_proj_dim: int = 64,
                 num_heads: int = 8, has_relative_attention_bias: bool = False,
                 relative_attention_num_buckets: int = 32, dropout: float = 0.1, normalize: bool = True,
                 is_cross_attention: bool = False):
        super().__init__(hidden_size=hidden_size, attention_head_size=key_value_proj_dim, num_attention_heads=num_heads,
                         output_linear=True, scoring_func="dot_product", dropout=dropout, bias=False,
                         normalize_weights=normalize, is_decoder=is_decoder, is_cross_attention=is_cross_attention,
                         relative_attention_num_buckets=(relative_attention_num_buckets
                                                         if has_relative_attention_bias else None))

    def forward(self, hidden_states: torch.Tensor, mask: Optional[torch.BoolTensor] = None,  # type: ignore[override]
                key_value_states: Optional[FloatT] = None, position_bias: Optional[FloatT] = None,
                past_key_value: Optional[Tuple[FloatT, FloatT]] = None, layer_head_mask: Optional[torch.Tensor] = None,
                query_length: Optional[int] = None, use_cache: bool = False,
                output_attentions: bool = False) -> AttentionOutput:
        """Self-attention, or attention over ``key_value_states`` (the encoder's output); ``mask`` applies in
        both (T5 masks its cross-attention with the encoder's padding through this one argument)."""
        past_key, past_value = past_key_value if past_key_value else (None, None)
        return super().forward(hidden_states, past_key_states=past_key, past_value_states=past_value,
                               attention_mask=mask, source_states=key_value_states, source_attention_mask=mask,
                               head_mask=layer_head_mask, position_bias=position_bias,
                               output_attentions=output_attentions, use_cache=use_cache, query_length=query_length)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "T5Attention":
        return cls(**{"hidden_size": config.hidden_size, "key_value_proj_dim": config.d_kv,
                      "is_decoder": getattr(config, "is_decoder", False),
                      "has_relative_attention_bias": getattr(config, "has_relative_attention_bias", True),
                      "normalize": getattr(config, "normalize", True),
                      "is_cross_attention": getattr(config, "is_cross_attention", False),
                      "relative_attention_num_buckets": config.relative_attention_num_buckets,
                      "num_heads": config.num_attention_heads, "dropout": config.dropout_rate, **kwargs})


class SelfAttention(AttentionModule):
    """BERT's attention: scaled dot products over heads of ``hidden_size / num_attention_heads``; ``dropout`` is
    applied to the probabilities. DistilBERT's (``q_lin``... and an output projection) loads into it too."""

    _pretrained_relevant_module = ["encoder.layers.0.attention.self", "encoder.layers.0.attention"]
    _pretrained_mapping = {"layer": "layers", "q_lin": "query", "k_lin": "key", "v_lin": "value",
                           "out_lin": "output", "transformer": "encoder"}

    def __init__(self, hidden_size: int, num_attention_heads: int, dropout: float = 0.0,
                 scoring_func: str = "scaled_dot_product", output_linear: bool = False, is_decoder: bool = False,
                 is_cross_attention: bool = False):
        super().__init__(hidden_size=hidden_size, attention_head_size=int(hidden_size / num_attention_heads),
                         num_attention_heads=num_attention_heads, scoring_func=scoring_func,
                         output_linear=output_linear, dropout=dropout, bias=True, is_decoder=is_decoder,
                         is_cross_attention=is_cross_attention)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "SelfAttention":
        dropout = config.attention_dropout if hasattr(config, "attention_dropout") else \
            config.attention_probs_dropout_prob
        # DistilBERT's config (the one with ``n_heads``) has an output projection inside its attention
        return cls(**{"hidden_size": config.hidden_size, "num_attention_heads": config.num_attention_heads,
                      "output_linear": hasattr(config, "n_heads"), "dropout": dropout, **kwargs})
