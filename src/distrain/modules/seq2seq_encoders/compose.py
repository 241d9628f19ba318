"""AllenNLP's ``compose`` seq2seq encoder: encoders applied one after the other, each to the last one's output."""

from __future__ import annotations

import torch

from distrain.modules.seq2seq_encoder import Seq2SeqEncoder


@Seq2SeqEncoder.register("compose")
class ComposeEncoder(Seq2SeqEncoder):
    """``encoders`` in order; each one's input width must be the previous one's output width, and they are all
    bidirectional or none is."""

    runtime_args = ()  # the encoders state their own widths

    def __init__(self, encoders: list[Seq2SeqEncoder]) -> None:
        super().__init__()
        if not encoders:
            raise ValueError("compose needs at least one encoder")
        for number, (before, after) in enumerate(zip(encoders, encoders[1:]), start=1):
            if before.get_output_dim() != after.get_input_dim():
                raise ValueError(f"compose: encoder {number} outputs {before.get_output_dim()} wide, but encoder "
                                 f"{number + 1} takes {after.get_input_dim()}")
        directions = {encoder.is_bidirectional() for encoder in encoders}
        if len(directions) > 1:
            raise ValueError("compose: the encoders are all bidirectional or none is")
        self.encoders = torch.nn.ModuleList(encoders)
        self.bidirectional = directions.pop()
        self.input_dim, self.output_dim = encoders[0].get_input_dim(), encoders[-1].get_output_dim()

    def is_bidirectional(self) -> bool:
        return self.bidirectional

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for encoder in self.encoders:
            inputs = encoder(inputs, mask)
        return inputs
