"""``allennlp.modules.augmented_lstm``: AllenNLP's ``AugmentedLSTMCell``, ``AugmentedLstm`` and
``BiAugmentedLstm`` on ``PackedSequence``s, running distrain's AugmentedLstm step and loop
(:mod:`distrain.modules.augmented_lstm`); parameters are named as AllenNLP's (``cell.input_linearity``,
``forward_layers.0.cell...``), so AllenNLP's weights load as they are."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import PackedSequence

from distrain.allennlp.modules.packed_sequences import (TensorPair, per_layer_states, repack, stacked_states,
                                                        unpack)
from distrain.modules.augmented_lstm import AugmentedLstmGates, recurrent_dropout_mask, run_augmented_lstm


class AugmentedLSTMCell(AugmentedLstmGates):
    """One step of an AugmentedLstm: ``(x, (hidden, memory))`` → ``(hidden, memory)``, each (batch, lstm_dim)."""

    def __init__(self, embed_dim: int, lstm_dim: int, use_highway: bool = True, use_bias: bool = True) -> None:
        super().__init__(embed_dim, lstm_dim, use_highway, use_bias)
        self.embed_dim, self.lstm_dim, self.use_bias = embed_dim, lstm_dim, use_bias

    def forward(self, x: torch.Tensor, states: TensorPair,
                variational_dropout_mask: torch.Tensor | None = None) -> TensorPair:
        hidden, memory = states
        if variational_dropout_mask is not None and self.training:
            hidden = hidden * variational_dropout_mask
        return self.step(self.input_linearity(x), hidden, memory)


class AugmentedLstm(torch.nn.Module):
    """One direction of one layer over a ``PackedSequence``; returns the outputs packed and the final
    (hidden, memory), each (1, batch, hidden_size) as PyTorch's LSTM gives."""

    def __init__(self, input_size: int, hidden_size: int, go_forward: bool = True,
                 recurrent_dropout_probability: float = 0.0, use_highway: bool = True,
                 use_input_projection_bias: bool = True) -> None:
        super().__init__()
        self.embed_dim, self.lstm_dim = input_size, hidden_size
        self.go_forward, self.use_highway = go_forward, use_highway
        self.recurrent_dropout_probability = recurrent_dropout_probability
        self.cell = AugmentedLSTMCell(input_size, hidden_size, use_highway, use_input_projection_bias)

    def run_padded(self, inputs: torch.Tensor, mask: torch.Tensor,
                   state: TensorPair | None = None) -> tuple[torch.Tensor, TensorPair]:
        """The padded outputs and the final (batch, hidden) pair: what the stacked modules chain."""
        dropout_mask = recurrent_dropout_mask(inputs.new_zeros(inputs.shape[0], self.lstm_dim),
                                              self.recurrent_dropout_probability, self.training)
        return run_augmented_lstm(self.cell, inputs, mask, self.go_forward, dropout_mask, state)

    def forward(self, inputs: PackedSequence,
                states: TensorPair | None = None) -> tuple[PackedSequence, TensorPair]:
        padded, mask, lengths = unpack(inputs)
        (state,) = per_layer_states(states, 1)
        outputs, final = self.run_padded(padded, mask, state)
        return repack(outputs, lengths), stacked_states([final])


class BiAugmentedLstm(torch.nn.Module):
    """``num_layers`` of AugmentedLstm, each reading the whole output of the one below (both directions side
    by side when ``bidirectional``). ``states`` and the final states are PyTorch's: (layers × directions,
    batch, hidden_size), a layer's forward direction before its backward one."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 recurrent_dropout_probability: float = 0.0, bidirectional: bool = False,
                 padding_value: float = 0.0, use_highway: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bidirectional, self.padding_value, self.use_bias = bidirectional, padding_value, bias
        self.recurrent_dropout_probability, self.use_highway = recurrent_dropout_probability, use_highway
        directions = 2 if bidirectional else 1
        self.representation_dim = hidden_size * directions

        def layers(go_forward: bool) -> torch.nn.ModuleList:
            return torch.nn.ModuleList(
                AugmentedLstm(input_size if index == 0 else self.representation_dim, hidden_size, go_forward,
                              recurrent_dropout_probability, use_highway, bias) for index in range(num_layers))

        self.forward_layers = layers(True)
        if bidirectional:
            self.backward_layers = layers(False)

    def forward(self, inputs: PackedSequence,
                states: TensorPair | None = None) -> tuple[PackedSequence, TensorPair]:
        padded, mask, lengths = unpack(inputs)
        directions = [self.forward_layers] + ([self.backward_layers] if self.bidirectional else [])
        initial = per_layer_states(states, self.num_layers * len(directions))
        output, finals = padded, []
        for index in range(self.num_layers):
            runs = [layers[index].run_padded(output, mask, initial[index * len(directions) + offset])
                    for offset, layers in enumerate(directions)]
            output = torch.cat([run_output for run_output, _ in runs], -1)
            finals.extend(final for _, final in runs)
        output = output.masked_fill(~mask.unsqueeze(-1), self.padding_value)
        return repack(output, lengths), stacked_states(finals)


__all__ = ["AugmentedLSTMCell", "AugmentedLstm", "BiAugmentedLstm"]
