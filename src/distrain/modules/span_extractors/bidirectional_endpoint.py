"""``bidirectional_endpoint``: for a bidirectional encoder's output, a span is what the forward half
learned across it (the vector at its end against the one before its start) beside what the backward half
learned (the vector at its start against the one after its end)."""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.errors import Problem
from distrain.modules.combinations import Combination, combine, combined_dim
from distrain.modules.span_extractor import SpanExtractor, batched_index_select


@SpanExtractor.register("bidirectional_endpoint")
class BidirectionalEndpointSpanExtractor(SpanExtractor):
    """The first half of ``input_dim`` is the forward direction: ``forward_combination(x, y)`` of the forward
    vector before the span (``x``) and at its end (``y``); ``backward_combination`` of the backward vector
    after the span and at its start. Outside the sequence the learned sentinels stand in (``use_sentinels``),
    or the vector at index 0."""

    def __init__(self, input_dim: PositiveInt, forward_combination: Combination = "y-x",
                 backward_combination: Combination = "x-y", num_width_embeddings: PositiveInt | None = None,
                 span_width_embedding_dim: PositiveInt | None = None, bucket_widths: bool = False,
                 use_sentinels: bool = True) -> None:
        super().__init__(input_dim, num_width_embeddings, span_width_embedding_dim, bucket_widths)
        self.forward_combination, self.backward_combination = forward_combination, backward_combination
        self.use_sentinels = use_sentinels
        if use_sentinels:
            self.start_sentinel = torch.nn.Parameter(torch.randn(1, 1, input_dim // 2))
            self.end_sentinel = torch.nn.Parameter(torch.randn(1, 1, input_dim // 2))

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = super().argument_problems(arguments)
        if arguments["input_dim"] % 2:
            problems.append(Problem("input_dim", f"must be even (a forward and a backward half), got {arguments['input_dim']}"))
        return problems

    def span_dim(self) -> int:
        half = self.input_dim // 2
        return combined_dim(self.forward_combination, half) + combined_dim(self.backward_combination, half)

    def embed_spans(self, sequence: torch.Tensor, spans: torch.Tensor, sequence_mask: torch.Tensor | None,
                    span_mask: torch.Tensor | None) -> torch.Tensor:
        forward_sequence, backward_sequence = sequence.split(self.input_dim // 2, dim=-1)
        starts, ends = spans[..., 0], spans[..., 1]
        if span_mask is not None:
            starts, ends = starts * span_mask, ends * span_mask
        if sequence_mask is not None:
            lengths = sequence_mask.sum(-1)
        else:
            lengths = torch.full_like(sequence[:, 0, 0], sequence.shape[1], dtype=torch.long)
        before, after = starts - 1, ends + 1
        at_start = (before == -1).unsqueeze(-1)
        at_end = (after >= lengths.unsqueeze(-1)).unsqueeze(-1)
        before, after = before * ~at_start.squeeze(-1), after * ~at_end.squeeze(-1)
        if (before < 0).any() or (after > lengths.unsqueeze(-1)).any():
            raise ValueError(f"span indices must lie inside each sequence's length, got {spans.tolist()} "
                             f"for lengths {lengths.tolist()}")
        forward_start = batched_index_select(forward_sequence, before)
        backward_start = batched_index_select(backward_sequence, after)
        if self.use_sentinels:
            forward_start = torch.where(at_start, self.start_sentinel.to(sequence.dtype), forward_start)
            backward_start = torch.where(at_end, self.end_sentinel.to(sequence.dtype), backward_start)
        forward_spans = combine(self.forward_combination, forward_start, batched_index_select(forward_sequence, ends))
        backward_spans = combine(self.backward_combination, backward_start,
                                 batched_index_select(backward_sequence, starts))
        return torch.cat([forward_spans, backward_spans], -1)
