"""``stacked_bidirectional_lstm`` as a seq2vec encoder (AllenNLP registers it so): the top layer's final
states, the forward direction's at each row's last real step beside the backward direction's at its first."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.modules.seq2seq_encoders.stacked_bidirectional_lstm import StackedBidirectionalLstmSeq2SeqEncoder
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.tensor_ops import get_final_encoder_states


@Seq2VecEncoder.register("stacked_bidirectional_lstm")
class StackedBidirectionalLstmSeq2VecEncoder(Seq2VecEncoder):
    """The seq2seq stack's final states, ``2 * hidden_size`` wide (zeros for an empty row)."""

    input_size_key = "input_size"
    #: AllenNLP's ``_module.forward_layer_0.cell.input_linearity`` is ``stack.forward_layers.0.input_linearity``
    allennlp_names = {r"_module\.(forward|backward)_layer_(\d+)\.cell": r"stack.\1_layers.\2"}

    def __init__(self, input_dim: int | None = None, hidden_size: PositiveInt = 128, num_layers: PositiveInt = 1,
                 recurrent_dropout_probability: Probability = 0.0, layer_dropout_probability: Probability = 0.0,
                 use_highway: bool = True, input_size: PositiveInt | None = None) -> None:
        super().__init__()
        self.stack = StackedBidirectionalLstmSeq2SeqEncoder(input_dim, hidden_size, num_layers,
                                                            recurrent_dropout_probability,
                                                            layer_dropout_probability, use_highway, input_size)
        self.input_dim, self.output_dim = self.stack.input_dim, self.stack.output_dim

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return StackedBidirectionalLstmSeq2SeqEncoder.configured_output_dim(encoder, input_dim)


    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return get_final_encoder_states(self.stack(inputs, mask), mask, bidirectional=True)
