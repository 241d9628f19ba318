"""``lstm`` and ``gru`` as seq2vec encoders: the last layer's final hidden state over the unpadded
sequence (both directions concatenated when bidirectional), as AllenNLP's ``PytorchSeq2VecWrapper``."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import resolve_input_dim


class _RnnSeq2Vec(Seq2VecEncoder):
    rnn_class: type[torch.nn.RNNBase]
    #: the submodule's name (``lstm``/``gru``), so checkpoint keys read as what the layer is
    attribute: str
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

    @property
    def rnn(self) -> torch.nn.RNNBase:
        return getattr(self, self.attribute)

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("hidden_size") * (2 if encoder.argument("bidirectional") else 1)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = torch.nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        _, hidden = self.rnn(packed)
        hidden = hidden[0] if isinstance(hidden, tuple) else hidden  # an LSTM's (h, c)
        if self.rnn.bidirectional:
            return torch.cat([hidden[-2], hidden[-1]], dim=-1)
        return hidden[-1]


@Seq2VecEncoder.register("lstm")
class LstmEncoder(_RnnSeq2Vec):
    """An LSTM's last-layer final hidden state over the unpadded sequence (both directions when bidirectional)."""

    rnn_class, attribute = torch.nn.LSTM, "lstm"


@Seq2VecEncoder.register("gru")
class GruEncoder(_RnnSeq2Vec):
    """A GRU's last-layer final hidden state over the unpadded sequence (both directions when bidirectional)."""

    rnn_class, attribute = torch.nn.GRU, "gru"
