"""``alternating_lstm``: AllenNLP's stack of :class:`AugmentedLstm` layers whose directions alternate (the
first reads forward, the second backward, ...), each reading the whole output of the one below: the
deep SRL model's encoder (He et al., 2017)."""

from __future__ import annotations

import re

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.augmented_lstm import AugmentedLstm
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2SeqEncoder.register("alternating_lstm")
class StackedAlternatingLstmSeq2SeqEncoder(Seq2SeqEncoder):
    """``num_layers`` layers of ``hidden_size``, alternately forward and backward, with highway connections
    and recurrent dropout; the output is the top layer's, ``hidden_size`` wide."""

    input_size_key = "input_size"

    def __init__(self, input_dim: int | None = None, hidden_size: PositiveInt = 128, num_layers: PositiveInt = 1,
                 recurrent_dropout_probability: Probability = 0.0, use_highway: bool = True,
                 use_input_projection_bias: bool = True, input_size: PositiveInt | None = None) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(input_size, input_dim, "input_size")
        self.output_dim = hidden_size
        self.layers = torch.nn.ModuleList(
            AugmentedLstm(self.input_dim if index == 0 else hidden_size, hidden_size, index % 2 == 0,
                          recurrent_dropout_probability, use_highway, use_input_projection_bias)
            for index in range(num_layers))

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("hidden_size")

    @classmethod
    def allennlp_name(cls, name: str) -> str:
        """AllenNLP's ``_module.layer_0.cell.input_linearity.weight`` is ``layers.0.input_linearity.weight``."""
        return re.sub(r"^_module\.layer_(\d+)\.cell\.", r"layers.\1.", name)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        output = inputs
        for layer in self.layers:
            output = layer(output, mask)
        return output
