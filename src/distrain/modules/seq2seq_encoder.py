"""Seq2seq encoders: a (batch, length, dim) sequence and its mask in, one vector per position out.

Like seq2vec encoders, ``input_dim`` is passed by the model that owns the encoder, or stated in the
config under the name AllenNLP used (``input_size_key``); both are checked to agree before data is read.
"""

from __future__ import annotations

from typing import ClassVar

import torch

from distrain.config.lazy import Lazy
from distrain.registry import Registrable


class Seq2SeqEncoder(torch.nn.Module, Registrable):
    default_implementation = "pass_through"
    runtime_args = ("input_dim",)
    input_size_key: ClassVar[str | None] = None
    input_dim: int
    output_dim: int

    @classmethod
    def input_dim_problem(cls, encoder: Lazy, input_dim: int) -> str | None:
        """Why the configured ``encoder`` cannot take ``input_dim`` (None: it can)."""
        return None

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return None

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
