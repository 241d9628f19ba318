"""AllenNLP's ``pretrained_transformer_mismatched``: run the transformer over word pieces, then give each
word the average (or first) of its pieces' vectors, so word-level labels line up with the output."""

from __future__ import annotations

from typing import Literal

import torch

from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.pretrained_transformer import PretrainedTransformerEmbedder


@TokenEmbedder.register("pretrained_transformer_mismatched")
class PretrainedTransformerMismatchedEmbedder(PretrainedTransformerEmbedder):
    """A transformer over word pieces, each word the average (or first) of its pieces' vectors."""

    def __init__(self, sub_token_mode: Literal["avg", "first"] = "avg", **kwargs) -> None:
        super().__init__(**kwargs)
        self.sub_token_mode = sub_token_mode

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, offsets: torch.Tensor,  # type: ignore[override]
                wordpiece_mask: torch.Tensor, type_ids: torch.Tensor | None = None) -> torch.Tensor:
        pieces = super().forward(token_ids, wordpiece_mask, type_ids)
        starts, ends = offsets[..., 0], offsets[..., 1]
        if self.sub_token_mode == "first":
            span = torch.zeros_like(starts).unsqueeze(-1)
        else:
            span = torch.arange(int((ends - starts).max().clamp(min=0)) + 1, device=offsets.device)
            span = span.view(1, 1, -1)
        positions = starts.unsqueeze(-1) + span  # (batch, words, widest span)
        inside = (positions <= ends.unsqueeze(-1)) & mask.unsqueeze(-1)
        positions = positions.clamp(max=pieces.shape[1] - 1)
        gathered = torch.gather(pieces.unsqueeze(1).expand(-1, positions.shape[1], -1, -1), 2,
                                positions.unsqueeze(-1).expand(-1, -1, -1, pieces.shape[-1]))
        weights = inside.unsqueeze(-1).to(pieces.dtype)
        return (gathered * weights).sum(2) / weights.sum(2).clamp(min=1.0)
