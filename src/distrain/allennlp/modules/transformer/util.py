"""``allennlp.modules.transformer.util``: the mask and head-shaping helpers every attention of the toolkit uses.

Masks arrive as AllenNLP users give them (1/True where a token is attended to, as a 2-D padding mask, a 3-D
query-by-key mask or an already broadcastable 4-D one) and are turned into the additive form attention scores
take: 0 where attended, the dtype's lowest value where not, so a masked score never wins a softmax.
"""

from __future__ import annotations

import copy
from typing import Tuple, Union

import torch

from distrain.modules.tensor_ops import min_value_of_dtype

# AllenNLP's aliases for annotations (plain tensors at run time)
FloatT = Union[torch.FloatTensor]
IntT = Union[torch.IntTensor]
BoolT = Union[torch.BoolTensor]


def broadcastable_mask(mask: torch.Tensor) -> torch.Tensor:
    """``mask`` shaped to broadcast over ``(batch, heads, queries, keys)``: a 2-D ``(batch, keys)`` mask gets a
    head and a query axis, a 3-D ``(batch, queries, keys)`` one a head axis, a 4-D one is left as it is."""
    if mask.dim() == 2:
        return mask[:, None, None, :]
    if mask.dim() == 3:
        return mask[:, None, :, :]
    return mask


def apply_mask(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``values`` (scores or a bias, ``batch x heads x queries x keys``) with the lowest value of their dtype
    added where ``mask`` (bool, int or float; see :func:`broadcastable_mask`) is 0."""
    keep = broadcastable_mask(mask).to(values.dtype)
    return values + (1.0 - keep) * min_value_of_dtype(values.dtype)


def get_extended_attention_mask(attention_mask: torch.Tensor, input_shape: Tuple[int, ...], dtype: torch.dtype,
                                is_decoder: bool = False) -> torch.Tensor:
    """A 2-D padding mask (or a 3-D query-by-key mask) made broadcastable to every head; for a decoder a 2-D mask
    is combined with the causal mask, so no position sees a later one (keys beyond the queries, a cache's past
    steps, are all visible). ``dtype`` is part of AllenNLP's signature; the mask keeps its own dtype."""
    if attention_mask.dim() == 3:
        return attention_mask[:, None, :, :]
    if attention_mask.dim() != 2:
        raise ValueError(f"an attention mask has 2 or 3 dimensions, got shape {tuple(attention_mask.shape)} "
                         f"for inputs of shape {tuple(input_shape)}")
    if not is_decoder:
        return attention_mask[:, None, None, :]
    batch_size, queries = input_shape
    keys = attention_mask.shape[1]
    steps = torch.arange(keys, device=attention_mask.device)
    # query i (the last ``queries`` of the ``keys`` positions) sees keys 0 .. keys - queries + i
    causal = steps[None, :] <= steps[keys - queries:, None]
    causal = causal[None].expand(batch_size, queries, keys).to(attention_mask.dtype)
    return causal[:, None, :, :] * attention_mask[:, None, None, :]


def split_heads(states: torch.Tensor, num_heads: int, head_size: int) -> torch.Tensor:
    """``(batch, length, heads * size)`` as ``(batch, heads, length, size)``: one attention per head."""
    batch, length = states.shape[:2]
    return states.view(batch, length, num_heads, head_size).permute(0, 2, 1, 3)


def merge_heads(states: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`split_heads`: the heads' outputs side by side again."""
    batch, heads, length, size = states.shape
    return states.permute(0, 2, 1, 3).contiguous().view(batch, length, heads * size)


def attend(probabilities: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The heads' weighted sums of ``values``, merged to ``(batch, queries, heads * size)``."""
    return merge_heads(torch.matmul(probabilities, values))


def replicate_layers(layer: torch.nn.Module, num_copies: int) -> torch.nn.ModuleList:
    """``num_copies`` independent deep copies of ``layer`` (each with its own parameters, equal at the start)."""
    return torch.nn.ModuleList(copy.deepcopy(layer) for _ in range(num_copies))
