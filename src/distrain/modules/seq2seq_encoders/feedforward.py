"""AllenNLP's ``feedforward`` seq2seq encoder: a feedforward network applied to each position (padding zeroed)."""

from __future__ import annotations

import torch

from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder


@Seq2SeqEncoder.register("feedforward")
class FeedForwardEncoder(Seq2SeqEncoder):
    """``feedforward`` at every position; its input and output widths are the encoder's."""

    runtime_args = ()  # the feedforward states its own input_dim

    def __init__(self, feedforward: FeedForward) -> None:
        super().__init__()
        self.feedforward = feedforward
        self.input_dim, self.output_dim = feedforward.get_input_dim(), feedforward.get_output_dim()

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        outputs = self.feedforward(inputs)
        return outputs if mask is None else outputs * mask.unsqueeze(-1).to(outputs.dtype)
