"""``lstm`` and ``gru`` as seq2seq encoders: every position's output over the unpadded sequence (zeros
at padding), both directions concatenated when bidirectional, as AllenNLP's ``PytorchSeq2SeqWrapper``."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


class TorchRnn:
    """What the seq2seq and the seq2vec ``lstm``/``gru`` share: torch's recurrent layer (``rnn_class``) built from
    AllenNLP's arguments, held under ``attribute`` (so checkpoint keys read as AllenNLP's), and run over each
    sequence's unpadded part."""

    rnn_class: type[torch.nn.RNNBase]
    attribute = "rnn"
    input_size_key = "input_size"

    def __init__(
        self, input_dim: int | None = None, hidden_size: PositiveInt = 128, num_layers: PositiveInt = 1,
        bidirectional: bool = False, input_size: PositiveInt | None = None, bias: bool = True,
        dropout: Probability = 0.0,
    ) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(input_size, input_dim, "input_size")
        setattr(self, self.attribute, self.rnn_class(self.input_dim, hidden_size, num_layers, bias=bias,
                                                     batch_first=True, dropout=dropout, bidirectional=bidirectional))
        self.output_dim = hidden_size * (2 if bidirectional else 1)

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("hidden_size") * (2 if encoder.argument("bidirectional") else 1)

    def run_unpadded(self, inputs: torch.Tensor, mask: torch.Tensor) -> tuple[Any, Any]:
        """The layer's (packed output, final hidden state) over each sequence's unpadded positions."""
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = torch.nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        return getattr(self, self.attribute)(packed)


class _RnnSeq2Seq(TorchRnn, Seq2SeqEncoder):
    def is_bidirectional(self) -> bool:
        return getattr(self.rnn, "bidirectional", False)  # a wrapped module of AllenNLP's may not say

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        output, _ = self.run_unpadded(inputs, mask)
        output, _ = torch.nn.utils.rnn.pad_packed_sequence(output, batch_first=True, total_length=inputs.shape[1])
        return output * mask.unsqueeze(-1).to(output.dtype)


@Seq2SeqEncoder.register("lstm")
class LstmSeq2SeqEncoder(_RnnSeq2Seq):
    """An LSTM's output at every position (zeros at padding), both directions concatenated when bidirectional."""

    rnn_class = torch.nn.LSTM


@Seq2SeqEncoder.register("gru")
class GruSeq2SeqEncoder(_RnnSeq2Seq):
    """A GRU's output at every position (zeros at padding), both directions concatenated when bidirectional."""

    rnn_class = torch.nn.GRU
