"""Span extractors: one vector per span of a sequence, (batch, length, input_dim) and (batch, spans, 2)
inclusive [start, end] indices in, (batch, spans, output_dim) out (AllenNLP's ``SpanExtractor``; the
span representations of coreference, SRL and constituency models).

As AllenNLP's, each may append an embedding of the span's width (``num_width_embeddings`` widths of
``span_width_embedding_dim``, optionally bucketed logarithmically), and zeroes masked spans.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

import torch

from distrain.config.errors import Problem
from distrain.registry import Registrable


def batched_index_select(sequence: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """``sequence`` (batch, length, d) at ``indices`` (batch, ...) of each row: (batch, ..., d)."""
    rows = torch.arange(sequence.shape[0], device=sequence.device).view(-1, *[1] * (indices.dim() - 1))
    return sequence[rows, indices]


def bucket_values(distances: torch.Tensor, num_identity_buckets: int = 4, num_total_buckets: int = 10) -> torch.Tensor:
    """AllenNLP's buckets: 0..4 as themselves, then one per power of two, capped at ``num_total_buckets - 1``."""
    logspace = (distances.float().log() / math.log(2)).floor().long() + (num_identity_buckets - 1)
    return torch.where(distances <= num_identity_buckets, distances, logspace).clamp(0, num_total_buckets - 1)


class SpanExtractor(torch.nn.Module, Registrable):
    default_implementation = "endpoint"

    def __init__(self, input_dim: int, num_width_embeddings: int | None = None,
                 span_width_embedding_dim: int | None = None, bucket_widths: bool = False) -> None:
        super().__init__()
        self.input_dim, self.num_width_embeddings, self.bucket_widths = input_dim, num_width_embeddings, bucket_widths
        self.span_width_embedding = None
        if num_width_embeddings is not None and span_width_embedding_dim is not None:
            self.span_width_embedding = torch.nn.Embedding(num_width_embeddings, span_width_embedding_dim)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        given = [key for key in ("num_width_embeddings", "span_width_embedding_dim") if arguments.get(key) is not None]
        if len(given) == 1:
            missing = ({"num_width_embeddings", "span_width_embedding_dim"} - set(given)).pop()
            return [Problem(given[0], f"needs {missing} too (a span width embedding takes both)")]
        return []

    @classmethod
    def allennlp_name(cls, name: str) -> str:
        """AllenNLP's ``_global_attention._module.weight`` is ``global_attention.weight``; its private
        ``_start_sentinel`` is ``start_sentinel``."""
        return ".".join(part.lstrip("_") for part in re.sub(r"\._module\.", ".", name).split("."))

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        width = self.span_width_embedding.embedding_dim if self.span_width_embedding is not None else 0
        return self.span_dim() + width

    def span_dim(self) -> int:  # pragma: no cover
        """The width of a span's vector before the width embedding."""
        raise NotImplementedError

    def forward(self, sequence_tensor: torch.Tensor, span_indices: torch.Tensor,
                sequence_mask: torch.Tensor | None = None, span_indices_mask: torch.Tensor | None = None) -> torch.Tensor:
        spans = self.embed_spans(sequence_tensor, span_indices, sequence_mask, span_indices_mask)
        if self.span_width_embedding is not None:
            widths = span_indices[..., 1] - span_indices[..., 0]
            if self.bucket_widths:
                widths = bucket_values(widths, num_total_buckets=self.num_width_embeddings)
            spans = torch.cat([spans, self.span_width_embedding(widths)], -1)
        if span_indices_mask is not None:
            return spans * span_indices_mask.unsqueeze(-1)
        return spans

    def embed_spans(self, sequence: torch.Tensor, spans: torch.Tensor, sequence_mask: torch.Tensor | None,
                    span_mask: torch.Tensor | None) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
