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


class AugmentedLstmGates(torch.nn.Module):
    """The weights of one direction of an AugmentedLstm layer and the step they take, kept apart from the
    loop over steps so AllenNLP's ``AugmentedLSTMCell`` and distrain's layer share them."""

    def __init__(self, input_size: int, hidden_size: int, use_highway: bool = True,
                 use_input_projection_bias: bool = True) -> None:
        super().__init__()
        self.hidden_size, self.use_highway = hidden_size, use_highway
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

    def step(self, projected: torch.Tensor, hidden: torch.Tensor,
             memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One step from the step's projected input and the previous (hidden, memory): the new pair."""
        width = self.hidden_size
        gates = projected[:, : self.state_linearity.out_features] + self.state_linearity(hidden)
        input_gate, forget_gate, candidate, output_gate = (gates[:, k * width: (k + 1) * width] for k in range(4))
        new_memory = torch.sigmoid(input_gate) * torch.tanh(candidate) + torch.sigmoid(forget_gate) * memory
        new_hidden = torch.sigmoid(output_gate) * torch.tanh(new_memory)
        if self.use_highway:
            highway_gate = torch.sigmoid(gates[:, 4 * width:])
            new_hidden = highway_gate * new_hidden + (1 - highway_gate) * projected[:, 5 * width:]
        return new_hidden, new_memory


def run_augmented_lstm(gates: AugmentedLstmGates, inputs: torch.Tensor, mask: torch.Tensor, go_forward: bool,
                       dropout_mask: torch.Tensor | None = None,
                       state: tuple[torch.Tensor, torch.Tensor] | None = None,
                       ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """``gates`` over (batch, steps, input_size) from ``state`` (zeros if none), forward or backward: the
    outputs (zero past each row's length) and each row's final (hidden, memory), both (batch, hidden_size).
    ``dropout_mask`` scales the hidden state fed back at every step; never the outputs."""
    batch, steps, _ = inputs.shape
    if state is None:
        hidden = memory = inputs.new_zeros(batch, gates.hidden_size)
    else:
        hidden, memory = state
    projected_inputs = gates.input_linearity(inputs)
    outputs = inputs.new_zeros(batch, steps, gates.hidden_size)
    for index in range(steps) if go_forward else reversed(range(steps)):
        active = mask[:, index].unsqueeze(-1)
        fed_back = hidden * dropout_mask if dropout_mask is not None else hidden
        new_hidden, new_memory = gates.step(projected_inputs[:, index], fed_back, memory)
        memory = torch.where(active, new_memory, memory)
        hidden = torch.where(active, new_hidden, hidden)
        outputs[:, index] = torch.where(active, new_hidden, torch.zeros_like(new_hidden))
    return outputs, (hidden, memory)


def recurrent_dropout_mask(like: torch.Tensor, probability: float, training: bool) -> torch.Tensor | None:
    """One mask per sequence for the fed-back hidden state (Gal and Ghahramani), scaled to keep the
    expectation; ``None`` when not training or not dropping."""
    if not training or probability <= 0:
        return None
    return (torch.rand_like(like) > probability).to(like.dtype) / (1.0 - probability)


class AugmentedLstm(AugmentedLstmGates):
    """One direction of one layer: (batch, steps, input_size) and a mask → (batch, steps, hidden_size)."""

    def __init__(self, input_size: int, hidden_size: int, go_forward: bool = True,
                 recurrent_dropout_probability: float = 0.0, use_highway: bool = True,
                 use_input_projection_bias: bool = True) -> None:
        super().__init__(input_size, hidden_size, use_highway, use_input_projection_bias)
        self.go_forward = go_forward
        self.recurrent_dropout_probability = recurrent_dropout_probability

    def forward_with_state(self, inputs: torch.Tensor, mask: torch.Tensor,
                           state: tuple[torch.Tensor, torch.Tensor] | None = None,
                           ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """The outputs and each row's final (hidden, memory), from ``state`` if given."""
        dropout_mask = recurrent_dropout_mask(inputs.new_zeros(inputs.shape[0], self.hidden_size),
                                              self.recurrent_dropout_probability, self.training)
        return run_augmented_lstm(self, inputs, mask, self.go_forward, dropout_mask, state)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.forward_with_state(inputs, mask)[0]


def variational_dropout(inputs: torch.Tensor, probability: float, training: bool) -> torch.Tensor:
    """Dropout with one mask per sequence, shared by every step (AllenNLP's ``InputVariationalDropout``)."""
    if not training or probability == 0:
        return inputs
    keep = torch.nn.functional.dropout(inputs.new_ones(inputs.shape[0], inputs.shape[-1]), probability, True)
    return inputs * keep.unsqueeze(1)
