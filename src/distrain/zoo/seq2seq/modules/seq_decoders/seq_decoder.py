"""AllenNLP's ``SeqDecoder``: the decoder half of ``composed_seq2seq``, from the encoder's outputs to the loss
(given a target) and, in evaluation, the decoded sequences. A ``decoder`` block naming no type is
``auto_regressive_seq_decoder``."""

from __future__ import annotations

from typing import Any

import torch

from distrain.registry import Registrable


class SeqDecoder(torch.nn.Module, Registrable):
    default_implementation = "auto_regressive_seq_decoder"
    runtime_args = ("vocab",)

    def __init__(self, target_embedder: torch.nn.Module) -> None:
        super().__init__()
        self.target_embedder = target_embedder

    def get_output_dim(self) -> int:
        raise NotImplementedError

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        raise NotImplementedError

    def forward(self, encoder_out: dict[str, torch.Tensor],
                target_tokens: dict[str, dict[str, torch.Tensor]] | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def post_process(self, output: dict[str, Any]) -> dict[str, Any]:
        """``output`` with ``predicted_tokens`` added."""
        raise NotImplementedError
