"""``lstm`` and ``gru`` as seq2vec encoders: the last layer's final hidden state over the unpadded
sequence (both directions concatenated when bidirectional), as AllenNLP's ``PytorchSeq2VecWrapper``."""

from __future__ import annotations

import torch

from distrain.modules.seq2seq_encoders.rnn import TorchRnn
from distrain.modules.seq2vec_encoder import Seq2VecEncoder


class _RnnSeq2Vec(TorchRnn, Seq2VecEncoder):
    #: the submodule's name (``lstm``/``gru``), so checkpoint keys read as what the layer is
    attribute: str

    @property
    def rnn(self) -> torch.nn.RNNBase:
        return getattr(self, self.attribute)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        _, hidden = self.run_unpadded(inputs, mask)
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
