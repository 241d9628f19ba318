"""``max_pooling``: a span is the elementwise maximum of its token vectors (AllenNLP's ``MaxPoolingSpanExtractor``).

Positions the sequence mask hides are left out of the maximum; a span with no visible position, or one that starts
after it ends or reaches outside the sequence, is an ``IndexError`` naming it (a masked span is not checked).
"""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.span_extractor import SpanExtractor, batched_index_select


@SpanExtractor.register("max_pooling")
class MaxPoolingSpanExtractor(SpanExtractor):
    """The maximum, dimension by dimension, of the vectors from a span's start to its end (inclusive)."""

    def __init__(self, input_dim: PositiveInt, num_width_embeddings: PositiveInt | None = None,
                 span_width_embedding_dim: PositiveInt | None = None, bucket_widths: bool = False) -> None:
        super().__init__(input_dim, num_width_embeddings, span_width_embedding_dim, bucket_widths)

    def span_dim(self) -> int:
        return self.input_dim

    def embed_spans(self, sequence: torch.Tensor, spans: torch.Tensor, sequence_mask: torch.Tensor | None,
                    span_mask: torch.Tensor | None) -> torch.Tensor:
        if sequence.shape[-1] != self.input_dim:
            raise ValueError(f"max_pooling: the sequence's vectors are {sequence.shape[-1]} wide, not its input_dim "
                             f"{self.input_dim}")
        starts, ends = spans[..., 0], spans[..., 1]
        counted = span_mask.bool() if span_mask is not None else torch.ones_like(starts, dtype=torch.bool)
        length = sequence.shape[1]
        wrong = counted & ((starts < 0) | (ends >= length) | (starts > ends))
        if wrong.any():
            raise IndexError(f"max_pooling: spans {spans[wrong].tolist()} do not lie inside a sequence of {length} "
                             "(start <= end, both within it)")
        starts, ends = starts.clamp(0, length - 1) * counted, ends.clamp(0, length - 1) * counted
        widest = int((ends - starts).max()) + 1 if spans.numel() else 1
        offsets = torch.arange(widest, device=spans.device)
        positions = starts.unsqueeze(-1) + offsets  # (batch, spans, widest)
        inside = positions <= ends.unsqueeze(-1)
        positions = positions.clamp(max=length - 1)
        if sequence_mask is not None:
            inside = inside & batched_index_select(sequence_mask.bool().unsqueeze(-1), positions).squeeze(-1)
        if (counted & ~inside.any(-1)).any():
            raise IndexError("max_pooling: a span covers only positions the sequence mask hides")
        vectors = batched_index_select(sequence, positions)  # (batch, spans, widest, dim)
        lowest = torch.finfo(vectors.dtype).min
        pooled = vectors.masked_fill(~inside.unsqueeze(-1), lowest).max(dim=2).values
        return torch.where(inside.any(-1, keepdim=True), pooled, pooled.new_zeros(()))
