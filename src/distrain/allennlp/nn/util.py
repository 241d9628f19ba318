"""``allennlp.nn.util``: masks, masked operations, index selection and losses, under AllenNLP's signatures.

The implementations are distrain's (:mod:`distrain.modules.tensor_ops`, :mod:`distrain.modules.masked_softmax`,
:mod:`distrain.modules.viterbi`, :mod:`distrain.modules.combinations`...); the functions defined here only
translate AllenNLP's arguments (numbered combination strings, ``viterbi_decode``'s keywords).
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from distrain.errors import ConfigError
from distrain.modules.combinations import combine, combine_and_multiply, is_combination
from distrain.modules.elmo import remove_sentence_boundaries
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.span_extractor import bucket_values
from distrain.modules.tensor_ops import (batched_index_select, batched_span_select, clamp_tensor, combine_initial_dims,
                                         flatten_and_batch_shift_indices, flattened_index_select, get_device_of,
                                         get_dropout_mask, get_final_encoder_states,
                                         get_lengths_from_binary_sequence_mask, get_mask_from_sequence_lengths,
                                         get_range_vector, info_value_of_dtype, logsumexp, masked_flip,
                                         masked_index_fill, masked_index_replace, masked_log_softmax, masked_max,
                                         masked_mean, masked_topk, max_value_of_dtype, min_value_of_dtype,
                                         move_to_device, replace_masked_values, sequence_cross_entropy_with_logits,
                                         sort_batch_by_length, tensors_equal, tiny_value_of_dtype,
                                         uncombine_initial_dims)
from distrain.modules.text_field_embedder import get_text_field_mask
from distrain.modules.viterbi import k_best_viterbi
from distrain.zoo.rc.modules.positional_features import add_positional_features


def get_token_ids_from_text_field_tensors(text_field_tensors: dict[str, dict[str, torch.Tensor]]) -> torch.Tensor:
    """The token ids of a text field's tensors: the first indexer's ``tokens``, ``token_ids`` or ``input_ids``."""
    for indexer_tensors in text_field_tensors.values():
        for name, tensor in indexer_tensors.items():
            if name in ("tokens", "token_ids", "input_ids"):
                return tensor
    raise NotImplementedError("the text field's tensors hold no token ids (tokens, token_ids or input_ids)")


def viterbi_decode(tag_sequence: torch.Tensor, transition_matrix: torch.Tensor,
                   tag_observations: Sequence[int] | None = None,
                   allowed_start_transitions: torch.Tensor | None = None,
                   allowed_end_transitions: torch.Tensor | None = None, top_k: int | None = None):
    """The best tag path and its score (``top_k``: lists of the ``top_k`` best paths and their scores)."""
    if top_k is not None and top_k < 1:
        raise ValueError(f"top_k must be at least 1, not {top_k}")
    if tag_observations and len(tag_observations) != tag_sequence.size(0):
        raise ConfigError(f"{len(tag_observations)} observations for a sequence of {tag_sequence.size(0)} tags")
    paths, scores = k_best_viterbi(tag_sequence, transition_matrix, tag_observations, allowed_start_transitions,
                                   allowed_end_transitions, top_k or 1)
    return (paths[0], scores[0]) if top_k is None else (paths, scores)


def _lettered(combination: str, count: int) -> str:
    """AllenNLP's numbered pieces (``1,2,1*2``) as distrain's lettered ones (``x,y,x*y``)."""
    if count > 2:
        raise ConfigError(f"combination {combination!r}: distrain combines two tensors, not {count}")
    lettered = combination.replace("1", "x").replace("2", "y")
    if any(char.isdigit() for char in lettered) or not is_combination(lettered):
        raise ConfigError(f"invalid combination {combination!r}")
    return lettered


def combine_tensors(combination: str, tensors: list[torch.Tensor]) -> torch.Tensor:
    return combine(_lettered(combination, len(tensors)), tensors[0], tensors[-1])


def combine_tensors_and_multiply(combination: str, tensors: list[torch.Tensor], weights: torch.Tensor) -> torch.Tensor:
    return combine_and_multiply(_lettered(combination, len(tensors)), tensors[0], tensors[-1], weights)


def get_combined_dim(combination: str, tensor_dims: list[int]) -> int:
    """The width of :func:`combine_tensors`' result for tensors of widths ``tensor_dims``."""
    total = 0
    for piece in _lettered(combination, len(tensor_dims)).replace(" ", "").split(","):
        widths = [tensor_dims[0 if name == "x" else -1] for name in piece[::2]]
        if len(set(widths)) > 1:
            raise ConfigError(f"combination piece {piece!r} joins tensors of widths {widths}")
        total += widths[0]
    return total


def add_sentence_boundary_token_ids(tensor: torch.Tensor, mask: torch.Tensor, sentence_begin_token: Any,
                                    sentence_end_token: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """``tensor`` (batch, steps) or (batch, steps, dim) with the begin token before and the end token after each
    sequence (its length from ``mask``), and the widened mask."""
    lengths = mask.long().sum(-1)
    shape = list(tensor.shape)
    shape[1] += 2
    framed = tensor.new_zeros(shape)
    rows = torch.arange(tensor.shape[0], device=tensor.device)
    framed[:, 1:-1] = tensor
    if tensor.dim() == 2:
        framed[:, 0] = sentence_begin_token
        framed[rows, lengths + 1] = sentence_end_token
        new_mask = framed != 0
    elif tensor.dim() == 3:
        framed[:, 0, :] = torch.as_tensor(sentence_begin_token, dtype=tensor.dtype, device=tensor.device)
        framed[rows, lengths + 1, :] = torch.as_tensor(sentence_end_token, dtype=tensor.dtype, device=tensor.device)
        new_mask = (framed > 0).sum(-1) > 0
    else:
        raise ValueError(f"add_sentence_boundary_token_ids takes a 2-d or 3-d tensor, not {tensor.dim()}-d")
    return framed, new_mask


def inspect_parameters(module: torch.nn.Module, quiet: bool = False) -> dict[str, Any]:
    """A nested dict of ``module``'s parameter names, each leaf ``"tunable"`` or ``"frozen"``."""
    tree: dict[str, Any] = {}
    for name, parameter in module.named_parameters():
        node = tree
        *parents, leaf = name.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = "tunable" if parameter.requires_grad else "frozen"
    if not quiet:
        import json

        print(json.dumps(tree, indent=4))
    return tree


def extend_layer(layer: torch.nn.Module, new_dim: int) -> None:
    """Grow a linear layer's output (or a bilinear's) to ``new_dim``, keeping its weights; new rows start at 0."""
    if not isinstance(layer, (torch.nn.Linear, torch.nn.Bilinear)):
        raise ConfigError(f"cannot extend a {type(layer).__name__}")
    old_dim = layer.out_features
    if new_dim == old_dim:
        return
    if new_dim < old_dim:
        raise ConfigError(f"cannot shrink a layer from {old_dim} to {new_dim}")
    weight = layer.weight.data.new_zeros((new_dim, *layer.weight.shape[1:]))
    weight[:old_dim] = layer.weight.data
    layer.weight = torch.nn.Parameter(weight, requires_grad=layer.weight.requires_grad)
    if layer.bias is not None:
        bias = layer.bias.data.new_zeros(new_dim)
        bias[:old_dim] = layer.bias.data
        layer.bias = torch.nn.Parameter(bias, requires_grad=layer.bias.requires_grad)
    layer.out_features = new_dim


def dist_reduce_sum(value: Any) -> Any:
    """``value`` summed over the workers of a process group (itself outside one)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return value
    tensor = value if isinstance(value, torch.Tensor) else torch.tensor(value)
    summed = tensor.clone()
    dist.all_reduce(summed)
    return summed if isinstance(value, torch.Tensor) else summed.item()


__all__ = [
    "add_positional_features", "add_sentence_boundary_token_ids", "batched_index_select", "batched_span_select",
    "bucket_values", "clamp_tensor", "combine_initial_dims", "combine_tensors", "combine_tensors_and_multiply",
    "dist_reduce_sum", "extend_layer", "flatten_and_batch_shift_indices", "flattened_index_select",
    "get_combined_dim", "get_device_of", "get_dropout_mask", "get_final_encoder_states",
    "get_lengths_from_binary_sequence_mask", "get_mask_from_sequence_lengths", "get_range_vector",
    "get_text_field_mask", "get_token_ids_from_text_field_tensors", "info_value_of_dtype", "inspect_parameters",
    "logsumexp", "masked_flip", "masked_index_fill", "masked_index_replace", "masked_log_softmax", "masked_max",
    "masked_mean", "masked_softmax", "masked_topk", "max_value_of_dtype", "min_value_of_dtype", "move_to_device",
    "remove_sentence_boundaries", "replace_masked_values", "sequence_cross_entropy_with_logits",
    "sort_batch_by_length", "tensors_equal", "tiny_value_of_dtype", "uncombine_initial_dims", "viterbi_decode",
    "weighted_sum",
]
