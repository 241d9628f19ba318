"""``allennlp.modules.stacked_alternating_lstm``: AllenNLP's ``StackedAlternatingLstm`` on ``PackedSequence``s,
layers of :class:`~distrain.allennlp.modules.augmented_lstm.AugmentedLstm` alternately forward and backward
(the deep SRL encoder; distrain's ``alternating_lstm`` seq2seq encoder is the same stack on a padded batch)."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import PackedSequence

from distrain.allennlp.modules.augmented_lstm import AugmentedLstm
from distrain.allennlp.modules.packed_sequences import (TensorPair, per_layer_states, repack, stacked_states,
                                                        unpack)


class StackedAlternatingLstm(torch.nn.Module):
    """``num_layers`` AugmentedLstms (``layer_0`` forward, ``layer_1`` backward, ...); the output is the top
    layer's, the final states (num_layers, batch, hidden_size)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int,
                 recurrent_dropout_probability: float = 0.0, use_highway: bool = True,
                 use_input_projection_bias: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.lstm_layers = []
        for index in range(num_layers):
            layer = AugmentedLstm(input_size if index == 0 else hidden_size, hidden_size, index % 2 == 0,
                                  recurrent_dropout_probability, use_highway, use_input_projection_bias)
            self.add_module(f"layer_{index}", layer)
            self.lstm_layers.append(layer)

    def forward(self, inputs: PackedSequence,
                initial_state: TensorPair | None = None) -> tuple[PackedSequence, TensorPair]:
        padded, mask, lengths = unpack(inputs)
        output, finals = padded, []
        for layer, state in zip(self.lstm_layers, per_layer_states(initial_state, self.num_layers)):
            output, final = layer.run_padded(output, mask, state)
            finals.append(final)
        return repack(output, lengths), stacked_states(finals)


__all__ = ["StackedAlternatingLstm"]
