"""``allennlp.training.util``: the n-gram helpers AllenNLP's BLEU is written with (distrain's BLEU counts its own,
:mod:`distrain.zoo.seq2seq.metrics.bleu`)."""

from __future__ import annotations

from collections import Counter

import torch

from distrain.zoo.seq2seq.metrics.bleu import ngram_counts

__all__ = ["get_valid_tokens_mask", "ngrams"]


def ngrams(tensor: torch.Tensor, ngram_size: int, exclude_indices: set[int]) -> Counter:
    """The ``ngram_size``-grams of a 1-d tensor of ids, none holding an excluded id."""
    return ngram_counts(tensor.detach().cpu().tolist(), ngram_size, set(exclude_indices))


def get_valid_tokens_mask(tensor: torch.Tensor, exclude_indices: set[int]) -> torch.Tensor:
    """True where the id is none of ``exclude_indices``."""
    valid = torch.ones_like(tensor, dtype=torch.bool)
    for index in exclude_indices:
        valid &= tensor != index
    return valid
