"""``self_attentive``: a span is the attention-weighted sum of its vectors, the weights a softmax over the
span of one learned score per position (Lee et al., 2017's head-word attention)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.span_extractor import SpanExtractor, batched_index_select


def span_positions(spans: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each span's positions (batch, spans, widest span), 0 where past its end, and the mask of real ones."""
    starts, ends = spans[..., :1], spans[..., 1:]
    offsets = torch.arange(int((ends - starts).max()) + 1, device=spans.device).view(1, 1, -1)
    positions = starts + offsets
    mask = (offsets <= ends - starts) & (positions < length) & (positions >= 0)
    return positions * mask, mask


@SpanExtractor.register("self_attentive")
class SelfAttentiveSpanExtractor(SpanExtractor):
    """``sum_i softmax(w · x_i + b) x_i`` over the span's positions ``i``; the output is ``input_dim`` wide."""

    def __init__(self, input_dim: PositiveInt, num_width_embeddings: PositiveInt | None = None,
                 span_width_embedding_dim: PositiveInt | None = None, bucket_widths: bool = False) -> None:
        super().__init__(input_dim, num_width_embeddings, span_width_embedding_dim, bucket_widths)
        self.global_attention = torch.nn.Linear(input_dim, 1)

    def span_dim(self) -> int:
        return self.input_dim

    def embed_spans(self, sequence: torch.Tensor, spans: torch.Tensor, sequence_mask: torch.Tensor | None,
                    span_mask: torch.Tensor | None) -> torch.Tensor:
        scores = self.global_attention(sequence).squeeze(-1)
        positions, mask = span_positions(spans, sequence.shape[1])
        span_vectors = batched_index_select(sequence, positions)
        span_scores = batched_index_select(scores.unsqueeze(-1), positions).squeeze(-1)
        return weighted_sum(span_vectors, masked_softmax(span_scores, mask))
