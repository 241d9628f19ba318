"""AllenNLP's ``AugmentedLstm``: one direction of an LSTM layer written step by step, so it can add what
``torch.nn.LSTM`` lacks: a highway connection from the input to each step's output, and recurrent
dropout (one mask per sequence on the hidden state, Gal and Ghahramani's variational dropout).

The highway gate is a fifth gate; ``input_linearity`` gives a sixth block, the input projected to the
hidden width, which the gate mixes into the output. A row is read from its first step forward, or from
its last real step backward, and is zero past its length, as AllenNLP's packed sequences give.
"""

from __future__ import annotations

import torch


def block_orthogonal(weight: torch.Tensor, block: tuple[int, int]) -> None:
    """Each (rows, columns) block of ``weight`` set to a random orthogonal matrix (AllenNLP's start for
    LSTM weights: every gate's block is orthogonal on its own)."""
    rows, columns = block
    with torch.no_grad():
        for top in range(0, weight.shape[0], rows):
            for left in range(0, weight.shape[1], columns):
                torch.nn.init.orthogonal_(weight[top: top + rows, left: left + columns])


class AugmentedLstm(torch.nn.Module):
    """One direction of one layer: (batch, steps, input_size) and a mask → (batch, steps, hidden_size)."""

    def __init__(self, input_size: int, hidden_size: int, go_forward: bool = True,
                 recurrent_dropout_probability: float = 0.0, use_highway: bool = True,
                 use_input_projection_bias: bool = True) -> None:
        super().__init__()
        self.hidden_size, self.go_forward, self.use_highway = hidden_size, go_forward, use_highway
        self.recurrent_dropout_probability = recurrent_dropout_probability
        gates = 5 if use_highway else 4
        # gates in order: input, forget, memory, output (, highway); then (highway) the projected input
        self.input_linearity = torch.nn.Linear(input_size, (gates + use_highway) * hidden_size,
                                               bias=use_input_projection_bias)
        self.state_linearity = torch.nn.Linear(hidden_size, gates * hidden_size, bias=True)
        block_orthogonal(self.input_linearity.weight, (hidden_size, input_size))
        block_orthogonal(self.state_linearity.weight, (hidden_size, hidden_size))
        with torch.no_grad():
            self.state_linearity.bias.zero_()
            self.state_linearity.bias[hidden_size: 2 * hidden_size].fill_(1.0)  # remember by default

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = inputs.shape
        hidden = inputs.new_zeros(batch, self.hidden_size)
        memory = inputs.new_zeros(batch, self.hidden_size)
        dropout_mask = None
        if self.training and self.recurrent_dropout_probability > 0:
            keep = 1.0 - self.recurrent_dropout_probability
            dropout_mask = (torch.rand_like(hidden) > self.recurrent_dropout_probability).to(hidden.dtype) / keep
        projected_inputs = self.input_linearity(inputs)
        width = self.hidden_size
        outputs = inputs.new_zeros(batch, steps, width)
        for step in range(steps) if self.go_forward else reversed(range(steps)):
            active = mask[:, step].unsqueeze(-1)
            state = hidden * dropout_mask if dropout_mask is not None else hidden
            projected = projected_inputs[:, step]
            gates = projected[:, : self.state_linearity.out_features] + self.state_linearity(state)
            input_gate, forget_gate, candidate, output_gate = (gates[:, k * width: (k + 1) * width] for k in range(4))
            new_memory = torch.sigmoid(input_gate) * torch.tanh(candidate) + torch.sigmoid(forget_gate) * memory
            new_hidden = torch.sigmoid(output_gate) * torch.tanh(new_memory)
            if self.use_highway:
                highway_gate = torch.sigmoid(gates[:, 4 * width:])
                new_hidden = highway_gate * new_hidden + (1 - highway_gate) * projected[:, 5 * width:]
            memory = torch.where(active, new_memory, memory)
            hidden = torch.where(active, new_hidden, hidden)
            outputs[:, step] = torch.where(active, new_hidden, torch.zeros_like(new_hidden))
        return outputs


def variational_dropout(inputs: torch.Tensor, probability: float, training: bool) -> torch.Tensor:
    """Dropout with one mask per sequence, shared by every step (AllenNLP's ``InputVariationalDropout``)."""
    if not training or probability == 0:
        return inputs
    keep = torch.nn.functional.dropout(inputs.new_ones(inputs.shape[0], inputs.shape[-1]), probability, True)
    return inputs * keep.unsqueeze(1)
