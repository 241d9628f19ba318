"""T5's encoder and decoder stacks: token embeddings (shared with the rest of the model), blocks, a final norm.

The first block's self-attention holds the relative position bias; the bias it computes (with the mask already in
it) is handed to every later block, as is the first cross-attention's. A decoder stack decodes step by step with
``use_cache``: each block returns its keys and values, and the next step passes them back as ``past_key_values``.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, List, NamedTuple, Optional

import torch
from torch import nn

from distrain.allennlp.common.checks import ConfigurationError
from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.attention_module import T5Attention
from distrain.allennlp.modules.transformer.t5_layers import (KeyValueStates, T5Block, T5LayerCrossAttention, T5LayerFF,
                                                             T5LayerNorm, T5LayerSelfAttention)
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import FloatT, get_extended_attention_mask
from distrain.config.lazy import Lazy

logger = logging.getLogger(__name__)


class T5StackOutput(NamedTuple):
    last_hidden_state: FloatT
    past_key_values: Optional[List[KeyValueStates]] = None
    all_hidden_states: Optional[List[FloatT]] = None
    attentions: Optional[List[FloatT]] = None
    cross_attentions: Optional[List[FloatT]] = None


def resized_rows(weight: torch.Tensor, new_size: int, init_fn: Callable) -> torch.Tensor:
    """``weight`` with ``new_size`` rows: the old rows kept, new ones initialised in place by ``init_fn``."""
    if weight.shape[0] > new_size:
        logger.warning("Shrinking vocabulary from size %d to size %d. This is probably not what you want?",
                       weight.shape[0], new_size)
    resized = weight.new_empty((new_size, *weight.shape[1:]))
    kept = min(weight.shape[0], new_size)
    resized[:kept] = weight[:kept]
    if new_size > kept:
        init_fn(resized[kept:])
    return resized


def resized_embedding(embedding: nn.Embedding, new_size: int, init_fn: Callable) -> nn.Embedding:
    """A copy of ``embedding`` (its settings kept) with :func:`resized_rows` of its weight."""
    resized = nn.Embedding(new_size, embedding.embedding_dim, embedding.padding_idx, embedding.max_norm,
                           embedding.norm_type, embedding.scale_grad_by_freq, embedding.sparse,
                           device=embedding.weight.device, dtype=embedding.weight.dtype)
    resized.weight.data = resized_rows(embedding.weight.data, new_size, init_fn)
    return resized


class T5Stack(TransformerModule, FromParams):
    """A stack of encoder blocks or of decoder blocks (mixing them is refused)."""

    _pretrained_mapping = {"embed_tokens": "token_embeddings", "block": "blocks"}

    def __init__(self, token_embeddings: nn.Embedding, blocks: List[T5Block],
                 final_layer_norm: Optional[T5LayerNorm] = None, dropout: float = 0.1):
        super().__init__()
        self.is_decoder = _inner(blocks[0]).is_decoder
        if any(_inner(block).is_decoder != self.is_decoder for block in blocks):
            raise ConfigurationError("Found mismatched blocks in stack.")
        self.blocks = nn.ModuleList(blocks)
        self.token_embeddings = token_embeddings
        self.final_layer_norm = final_layer_norm or T5LayerNorm(hidden_size=self.hidden_size)
        self.dropout = nn.Dropout(dropout)

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def hidden_size(self) -> int:
        return _inner(self.blocks[0]).hidden_size

    @staticmethod
    def get_head_mask(head_mask: Optional[torch.Tensor], num_hidden_layers: int) -> Any:
        """One head mask per block, shaped ``(layers, batch, heads, queries, keys)``: a 1-D mask (one entry a
        head) serves every block, a 2-D one has a row a block; ``None`` is ``None`` for each."""
        if head_mask is None:
            return [None] * num_hidden_layers
        if head_mask.dim() == 1:
            head_mask = head_mask[None, None, :, None, None].expand(num_hidden_layers, -1, -1, -1, -1)
        elif head_mask.dim() == 2:
            head_mask = head_mask[:, None, :, None, None]
        assert head_mask.dim() == 5, f"head_mask.dim != 5, instead {head_mask.dim()}"
        return head_mask

    def resize_token_embeddings(self, new_size: int, *, init_fn: Callable = torch.nn.init.normal_) -> None:
        if self.token_embeddings.num_embeddings != new_size:
            self.token_embeddings = resized_embedding(self.token_embeddings, new_size, init_fn)

    def _embedded(self, input_ids: Optional[torch.Tensor], inputs_embeds: Optional[torch.Tensor]) -> torch.Tensor:
        prefix = "decoder_" if self.is_decoder else ""
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError(f"You have to specify either {prefix}inputs or {prefix}inputs_embeds (not both)")
        if inputs_embeds is not None:
            return inputs_embeds
        return self.token_embeddings(input_ids.view(-1, input_ids.shape[-1]))

    def forward(self, input_ids: Optional[torch.IntTensor] = None, attention_mask: Optional[torch.BoolTensor] = None,
                encoder_hidden_states: Optional[FloatT] = None,
                encoder_attention_mask: Optional[torch.BoolTensor] = None, inputs_embeds: Optional[FloatT] = None,
                head_mask: Optional[torch.BoolTensor] = None, encoder_head_mask: Optional[torch.BoolTensor] = None,
                past_key_values: Optional[List[KeyValueStates]] = None, use_cache: bool = False,
                output_attentions: bool = False, output_all_hidden_states: bool = False) -> T5StackOutput:
        """Token ids (or their embeddings) through the blocks; masks are 1 where attended, the decoder's made
        causal here."""
        embedded = self._embedded(input_ids, inputs_embeds)
        batch_size, length = embedded.shape[:2]
        assert not use_cache or self.is_decoder, f":obj:`use_cache` can only be set to `True` if {self} is used " \
                                                 "as a decoder"
        past_length = 0 if past_key_values is None else past_key_values[0][0].shape[2]
        if attention_mask is None:
            attention_mask = torch.ones(batch_size, past_length + length, dtype=torch.bool, device=embedded.device)
        if self.is_decoder and encoder_attention_mask is None and encoder_hidden_states is not None:
            encoder_attention_mask = torch.ones(batch_size, encoder_hidden_states.shape[1], dtype=torch.bool,
                                                device=embedded.device)
        mask = get_extended_attention_mask(attention_mask, (batch_size, length), embedded.dtype,
                                           is_decoder=self.is_decoder)
        head_masks = self.get_head_mask(head_mask, self.num_blocks)
        encoder_head_masks = self.get_head_mask(encoder_head_mask, self.num_blocks)
        caches: List[KeyValueStates] = []
        states: List[FloatT] = []
        attentions: List[FloatT] = []
        cross_attentions: List[FloatT] = []
        position_bias = cross_position_bias = None
        hidden_states = self.dropout(embedded)
        for index, block in enumerate(self.blocks):
            states.append(hidden_states)
            out = block(hidden_states, attention_mask=mask, position_bias=position_bias,
                        encoder_hidden_states=encoder_hidden_states, encoder_attention_mask=encoder_attention_mask,
                        encoder_decoder_position_bias=cross_position_bias, layer_head_mask=head_masks[index],
                        encoder_layer_head_mask=encoder_head_masks[index],
                        past_key_value=None if past_key_values is None else past_key_values[index],
                        use_cache=use_cache, output_attentions=output_attentions)
            hidden_states, position_bias = out.hidden_states, out.self_attn_position_bias
            if self.is_decoder and encoder_hidden_states is not None:
                cross_position_bias = out.cross_attn_position_bias
            caches.append(out.present_key_value_states)
            attentions.append(out.self_attn_weights)
            cross_attentions.append(out.cross_attn_weights)
        hidden_states = self.dropout(self.final_layer_norm(hidden_states))
        return T5StackOutput(hidden_states, caches if use_cache else None,
                             states + [hidden_states] if output_all_hidden_states else None,
                             attentions if output_attentions else None,
                             cross_attentions if output_attentions and self.is_decoder else None)


def _inner(block: nn.Module) -> Any:
    """The block inside a wrapper (a checkpointing or sharding one), for its attributes."""
    return block.get_original_module() if hasattr(block, "get_original_module") else block


def _basic_blocks(num_blocks: int, block: Callable[[int], T5Block], ddp_accelerator: Any,
                  checkpoint_wrapper: Any) -> List[nn.Module]:
    """``num_blocks`` blocks (``block(i)`` builds block ``i``), each wrapped for activation checkpointing and for
    sharding when those are given (anything with AllenNLP's ``wrap_module``)."""
    blocks = []
    for index in range(num_blocks):
        built = block(index)
        if checkpoint_wrapper is not None:
            built = checkpoint_wrapper.wrap_module(built)
        if ddp_accelerator is not None:
            built = ddp_accelerator.wrap_module(built)
        blocks.append(built)
    return blocks


class T5EncoderStack(T5Stack):
    def __init__(self, token_embeddings: nn.Embedding, blocks: List[T5Block],
                 final_layer_norm: Optional[T5LayerNorm] = None, dropout: float = 0.1):
        if any(_inner(block).is_decoder for block in blocks):
            raise ConfigurationError("Found a decoder block in an encoder stack. This won't work.")
        super().__init__(token_embeddings, blocks, final_layer_norm=final_layer_norm, dropout=dropout)

    @classmethod
    def basic_encoder(cls, token_embeddings: nn.Embedding, num_blocks: int = 6,
                      block_self_attention: Lazy[T5Attention] = Lazy(T5Attention),
                      final_layer_norm: Optional[T5LayerNorm] = None, block_ff: Lazy[T5LayerFF] = Lazy(T5LayerFF),
                      dropout: float = 0.1, ddp_accelerator: Any = None,
                      checkpoint_wrapper: Any = None) -> "T5EncoderStack":
        """``num_blocks`` encoder blocks, the first with the relative position bias."""
        def block(index: int) -> T5Block:
            attention = block_self_attention.construct(is_decoder=False, has_relative_attention_bias=index == 0)
            return T5Block(attention=T5LayerSelfAttention(self_attention=attention), ff=block_ff.construct())

        return cls(token_embeddings, _basic_blocks(num_blocks, block, ddp_accelerator, checkpoint_wrapper),
                   final_layer_norm=final_layer_norm, dropout=dropout)


class T5DecoderStack(T5Stack):
    def __init__(self, token_embeddings: nn.Embedding, blocks: List[T5Block],
                 final_layer_norm: Optional[T5LayerNorm] = None, dropout: float = 0.1):
        if not all(_inner(block).is_decoder for block in blocks):
            raise ConfigurationError("Found an encoder block in a decoder stack. This won't work.")
        super().__init__(token_embeddings, blocks, final_layer_norm=final_layer_norm, dropout=dropout)

    @classmethod
    def basic_decoder(cls, token_embeddings: nn.Embedding, num_blocks: int = 6,
                      block_self_attention: Lazy[T5Attention] = Lazy(T5Attention),
                      block_cross_attention: Lazy[T5Attention] = Lazy(T5Attention),
                      final_layer_norm: Optional[T5LayerNorm] = None, block_ff: Lazy[T5LayerFF] = Lazy(T5LayerFF),
                      dropout: float = 0.1, ddp_accelerator: Any = None,
                      checkpoint_wrapper: Any = None) -> "T5DecoderStack":
        """``num_blocks`` decoder blocks (causal self-attention, the first with the relative position bias, and
        attention over the encoder's states)."""
        def block(index: int) -> T5Block:
            attention = block_self_attention.construct(is_decoder=True, has_relative_attention_bias=index == 0)
            crossing = block_cross_attention.construct(is_decoder=True, has_relative_attention_bias=False)
            return T5Block(attention=T5LayerSelfAttention(self_attention=attention),
                           cross_attention=T5LayerCrossAttention(enc_dec_attention=crossing), ff=block_ff.construct())

        return cls(token_embeddings, _basic_blocks(num_blocks, block, ddp_accelerator, checkpoint_wrapper),
                   final_layer_norm=final_layer_norm, dropout=dropout)


def lazy(build: Callable, **arguments: Any) -> Lazy:
    """A ``Lazy`` that calls ``build`` with ``arguments`` under the run-time ones (AllenNLP's
    ``Lazy(cls, constructor_extras=...)``)."""
    return Lazy(functools.partial(build, **arguments))
