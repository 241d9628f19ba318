"""``allennlp.modules.stacked_bidirectional_lstm``: AllenNLP's ``StackedBidirectionalLstm`` on
``PackedSequence``s (distrain's ``stacked_bidirectional_lstm`` seq2seq encoder is the same stack on a padded
batch): each layer a forward and a backward AugmentedLstm reading both directions of the layer below, with
variational dropout between layers."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import PackedSequence

from distrain.allennlp.modules.augmented_lstm import AugmentedLstm
from distrain.allennlp.modules.packed_sequences import (TensorPair, per_layer_states, repack, stacked_states,
                                                        unpack)
from distrain.modules.augmented_lstm import variational_dropout


class StackedBidirectionalLstm(torch.nn.Module):
    """``num_layers`` bidirectional layers (``forward_layer_i``, ``backward_layer_i``; input projections
    without bias, as AllenNLP's). A layer's initial state, (num_layers, batch, hidden_size) in all, starts
    both its directions; the final states are (2 × num_layers, batch, hidden_size), forward then backward."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int,
                 recurrent_dropout_probability: float = 0.0, layer_dropout_probability: float = 0.0,
                 use_highway: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bidirectional = True  # PytorchSeq2SeqWrapper/Seq2VecWrapper read the output width from it
        self.layer_dropout_probability = layer_dropout_probability
        self.lstm_layers = []
        for index in range(num_layers):
            pair = [AugmentedLstm(input_size if index == 0 else 2 * hidden_size, hidden_size, go_forward,
                                  recurrent_dropout_probability, use_highway, use_input_projection_bias=False)
                    for go_forward in (True, False)]
            self.add_module(f"forward_layer_{index}", pair[0])
            self.add_module(f"backward_layer_{index}", pair[1])
            self.lstm_layers.append(pair)

    def forward(self, inputs: PackedSequence,
                initial_state: TensorPair | None = None) -> tuple[PackedSequence, TensorPair]:
        padded, mask, lengths = unpack(inputs)
        output, finals = padded, []
        for index, ((forward, backward), state) in enumerate(
                zip(self.lstm_layers, per_layer_states(initial_state, self.num_layers))):
            (forward_output, forward_final), (backward_output, backward_final) = (
                forward.run_padded(output, mask, state), backward.run_padded(output, mask, state))
            output = torch.cat([forward_output, backward_output], -1)
            if index < self.num_layers - 1:
                output = variational_dropout(output, self.layer_dropout_probability, self.training)
            finals.extend([forward_final, backward_final])
        return repack(output, lengths), stacked_states(finals)


__all__ = ["StackedBidirectionalLstm"]
