"""``stacked_bidirectional_lstm``: AllenNLP's stack of bidirectional :class:`AugmentedLstm` layers (highway
connections, recurrent dropout, and variational dropout between layers), each layer reading both
directions of the layer below; the output is forward and backward side by side."""

from __future__ import annotations

import re

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.augmented_lstm import AugmentedLstm, variational_dropout
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2SeqEncoder.register("stacked_bidirectional_lstm")
class StackedBidirectionalLstmSeq2SeqEncoder(Seq2SeqEncoder):
    """``num_layers`` bidirectional layers of ``hidden_size`` per direction; ``layer_dropout_probability``
    drops between layers (one mask per sequence), ``recurrent_dropout_probability`` inside each layer.
    The input projections have no bias (AllenNLP's choice here: the state projection has one)."""

    input_size_key = "input_size"

    def __init__(self, input_dim: int | None = None, hidden_size: PositiveInt = 128, num_layers: PositiveInt = 1,
                 recurrent_dropout_probability: Probability = 0.0, layer_dropout_probability: Probability = 0.0,
                 use_highway: bool = True, input_size: PositiveInt | None = None) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(input_size, input_dim, "input_size")
        self.output_dim = 2 * hidden_size
        self.layer_dropout_probability = layer_dropout_probability
        sizes = [self.input_dim] + [2 * hidden_size] * (num_layers - 1)

        def layers(go_forward: bool) -> torch.nn.ModuleList:
            return torch.nn.ModuleList(
                AugmentedLstm(size, hidden_size, go_forward, recurrent_dropout_probability, use_highway,
                              use_input_projection_bias=False) for size in sizes)

        self.forward_layers, self.backward_layers = layers(True), layers(False)

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return 2 * encoder.argument("hidden_size")

    @classmethod
    def allennlp_name(cls, name: str) -> str:
        """AllenNLP's ``_module.forward_layer_0.cell.input_linearity.weight`` is ``forward_layers.0.input_linearity.weight``."""
        return re.sub(r"^_module\.(forward|backward)_layer_(\d+)\.cell\.", r"\1_layers.\2.", name)

    def is_bidirectional(self) -> bool:
        return True

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        output = inputs
        for index, (forward, backward) in enumerate(zip(self.forward_layers, self.backward_layers)):
            output = torch.cat([forward(output, mask), backward(output, mask)], -1)
            if index < len(self.forward_layers) - 1:
                output = variational_dropout(output, self.layer_dropout_probability, self.training)
        return output
