"""``endpoint``: a span is its start and end vectors joined by ``combination`` (``"x,y"``: side by side)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.combinations import Combination, combine, combined_dim
from distrain.modules.span_extractor import SpanExtractor, batched_index_select


@SpanExtractor.register("endpoint")
class EndpointSpanExtractor(SpanExtractor):
    """``combination(x, y)`` of the span's first (``x``) and last (``y``) vectors. With
    ``use_exclusive_start_indices`` ``x`` is the vector before the span, a learned sentinel for spans that
    start the sequence."""

    def __init__(self, input_dim: PositiveInt, combination: Combination = "x,y",
                 num_width_embeddings: PositiveInt | None = None, span_width_embedding_dim: PositiveInt | None = None,
                 bucket_widths: bool = False, use_exclusive_start_indices: bool = False) -> None:
        super().__init__(input_dim, num_width_embeddings, span_width_embedding_dim, bucket_widths)
        self.combination, self.use_exclusive_start_indices = combination, use_exclusive_start_indices
        if use_exclusive_start_indices:
            self.start_sentinel = torch.nn.Parameter(torch.randn(1, 1, input_dim))

    def span_dim(self) -> int:
        return combined_dim(self.combination, self.input_dim)

    def embed_spans(self, sequence: torch.Tensor, spans: torch.Tensor, sequence_mask: torch.Tensor | None,
                    span_mask: torch.Tensor | None) -> torch.Tensor:
        starts, ends = spans[..., 0], spans[..., 1]
        if span_mask is not None:
            starts, ends = starts * span_mask, ends * span_mask
        if not self.use_exclusive_start_indices:
            return combine(self.combination, batched_index_select(sequence, starts), batched_index_select(sequence, ends))
        before = starts - 1
        at_start = (before == -1).unsqueeze(-1)
        if (before < -1).any():
            raise ValueError(f"span starts must lie inside the sequence, got {starts.tolist()}")
        start_vectors = batched_index_select(sequence, before.clamp(min=0))
        start_vectors = torch.where(at_start, self.start_sentinel.to(sequence.dtype), start_vectors)
        return combine(self.combination, start_vectors, batched_index_select(sequence, ends))
