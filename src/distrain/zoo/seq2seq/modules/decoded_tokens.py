"""Decoded ids as the target vocabulary's tokens, cut at the first end symbol (the end symbol left out)."""

from __future__ import annotations

from typing import Any, Sequence

import torch


def boundary_indices(vocab: Any, namespace: str) -> tuple[int, int]:
    """The target namespace's ids of the start and end symbols every decoder opens and closes a sequence with."""
    from distrain.zoo.seq2seq.readers.seq2seq import END_SYMBOL, START_SYMBOL  # the readers write them

    return vocab.get_token_index(START_SYMBOL, namespace), vocab.get_token_index(END_SYMBOL, namespace)


def as_nested_lists(values: Any) -> list:
    if isinstance(values, torch.Tensor):
        return values.detach().cpu().tolist()
    if hasattr(values, "tolist"):
        return values.tolist()
    return list(values)


def cut_at_end(ids: Sequence[int], end_index: int) -> list[int]:
    ids = list(ids)
    return ids[: ids.index(end_index)] if end_index in ids else ids


def ids_to_tokens(vocab: Any, ids: Sequence[int], namespace: str, end_index: int) -> list[str]:
    return [vocab.get_token_from_index(int(index), namespace) for index in cut_at_end(ids, end_index)]


def target_ids(tensors: dict[str, dict[str, torch.Tensor]]) -> torch.Tensor:
    """The token ids of a text field's tensors: a single-id indexer's ``tokens``, a pretrained one's
    ``token_ids`` (AllenNLP's ``get_token_ids_from_text_field_tensors``)."""
    for indexed in tensors.values():
        for key in ("tokens", "token_ids"):
            if key in indexed:
                return indexed[key]
    raise ValueError(f"no token ids among the target's tensors {sorted(tensors)}")
