"""Seq2seq encoders: a (batch, length, dim) sequence and its mask in, one vector per position out.

Like seq2vec encoders, ``input_dim`` is passed by the model that owns the encoder, or stated in the
config under the name AllenNLP used (``input_size_key``); both are checked to agree before data is read
(the widths contract: :class:`~distrain.modules.sizes.Widths`).
"""

from __future__ import annotations

import torch

from distrain.modules.sizes import Widths
from distrain.registry import Registrable


class Seq2SeqEncoder(torch.nn.Module, Widths, Registrable):
    default_implementation = "pass_through"
    runtime_args = ("input_dim",)

    def __init__(self, stateful: bool = False) -> None:
        """``stateful`` is AllenNLP's flag of its recurrent encoders, kept as ``self.stateful`` so an encoder written
        against AllenNLP's base class (``super().__init__(stateful=False)``) builds; distrain's encoders carry no
        state from one batch to the next."""
        super().__init__()
        self.stateful = stateful

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError
