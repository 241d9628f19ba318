"""AllenNLP's ``pass_through``: the input unchanged (padding zeroed), so a model's seq2seq step is optional."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2SeqEncoder.register("pass_through")
class PassThroughEncoder(Seq2SeqEncoder):
    """The input unchanged (padding zeroed)."""

    input_size_key = "input_dim"
    runtime_args = ()  # AllenNLP states input_dim in the config; an owning model may pass it instead

    def __init__(self, input_dim: PositiveInt | None = None) -> None:
        super().__init__()
        self.input_dim = self.output_dim = resolve_input_dim(None, input_dim, "input_dim")

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim if input_dim is not None else encoder.argument("input_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return inputs if mask is None else inputs * mask.unsqueeze(-1).to(inputs.dtype)
