"""Seq2seq encoders: a (batch, length, dim) sequence and its mask in, one vector per position out.

Like seq2vec encoders, ``input_dim`` is passed by the model that owns the encoder, or stated in the
config under the name AllenNLP used (``input_size_key``); both are checked to agree before data is read
(the widths contract: :class:`~distrain.modules.sizes.Widths`).
"""

from __future__ import annotations

import torch

from distrain.modules.encoder_base import EncoderBase
from distrain.registry import Registrable


class Seq2SeqEncoder(EncoderBase, Registrable):
    default_implementation = "pass_through"
    runtime_args = ("input_dim",)

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
