"""ELMo's biLM: two independent stacks of LSTMs with projections (one reads forward, one backward),
with a skip connection around every layer but the first, and a state carried between batches.

The cell is AllenNLP's ``LstmCellWithProjection``: a ``cell_size`` memory, clipped to
``±cell_clip``, whose output is projected down to ``hidden_size`` and clipped to ``±proj_clip``.

The carried state is AllenNLP's (and bilm-tf's) behaviour, kept because the pretrained model's outputs
depend on it: each batch row starts from the final state its row left in the previous batch (zeros at
first, and for rows a batch adds). The expected outputs of AllenNLP's fixture are made that way.
:meth:`ElmoLstm.reset_states` forgets it. The state is not a parameter: checkpoints do not hold it.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.modules.augmented_lstm import recurrent_dropout_mask

State = tuple[torch.Tensor, torch.Tensor]


class LstmCellWithProjection(torch.nn.Module):
    """One direction of one layer; ``go_forward: false`` reads each sequence from its last real step.
    ``recurrent_dropout_probability`` drops the projected state while training (one mask per sequence, applied
    to each step's output and so to what the next step reads, as AllenNLP's)."""

    def __init__(self, input_size: int, hidden_size: int, cell_size: int, go_forward: bool = True,
                 memory_cell_clip_value: float | None = None, state_projection_clip_value: float | None = None,
                 recurrent_dropout_probability: float = 0.0) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.cell_size = input_size, hidden_size, cell_size
        self.go_forward, self.recurrent_dropout_probability = go_forward, recurrent_dropout_probability
        self.cell_clip, self.projection_clip = memory_cell_clip_value, state_projection_clip_value
        # gates in PyTorch's order: input, forget, memory, output
        self.input_linearity = torch.nn.Linear(input_size, 4 * cell_size, bias=False)
        self.state_linearity = torch.nn.Linear(hidden_size, 4 * cell_size, bias=True)
        self.state_projection = torch.nn.Linear(cell_size, hidden_size, bias=False)

    def forward(self, inputs: torch.Tensor, lengths: torch.Tensor, state: State | None = None) -> tuple[torch.Tensor, State]:
        """(batch, steps, input_size) → outputs (batch, steps, hidden_size), zero past each row's length,
        and the final (hidden, memory) of each row, taken at its last real step."""
        batch, steps, _ = inputs.shape
        if state is None:
            state = (inputs.new_zeros(batch, self.hidden_size), inputs.new_zeros(batch, self.cell_size))
        hidden, memory = state
        projected_inputs = self.input_linearity(inputs)
        outputs = inputs.new_zeros(batch, steps, self.hidden_size)
        dropout_mask = recurrent_dropout_mask(hidden, self.recurrent_dropout_probability, self.training)
        for step in range(steps) if self.go_forward else reversed(range(steps)):
            active = (lengths > step).unsqueeze(-1)
            gates = projected_inputs[:, step] + self.state_linearity(hidden)
            input_gate, forget_gate, candidate, output_gate = gates.chunk(4, dim=-1)
            new_memory = torch.sigmoid(input_gate) * torch.tanh(candidate) + torch.sigmoid(forget_gate) * memory
            if self.cell_clip:
                new_memory = new_memory.clamp(-self.cell_clip, self.cell_clip)
            new_hidden = self.state_projection(torch.sigmoid(output_gate) * torch.tanh(new_memory))
            if self.projection_clip:
                new_hidden = new_hidden.clamp(-self.projection_clip, self.projection_clip)
            if dropout_mask is not None:
                new_hidden = new_hidden * dropout_mask
            memory = torch.where(active, new_memory, memory)
            hidden = torch.where(active, new_hidden, hidden)
            outputs[:, step] = torch.where(active, new_hidden, torch.zeros_like(new_hidden))
        return outputs, (hidden, memory)

    @torch.no_grad()
    def load_weights(self, cell: Any) -> None:
        """From bilm-tf's ``LSTMCell`` group: ``W_0`` holds input and recurrent weights side by side with
        gates ordered input, memory, forget, output; ``B`` lacks the 1 TensorFlow adds to the forget gate."""
        weight = torch.from_numpy(cell["W_0"][...]).T
        bias = torch.from_numpy(cell["B"][...]).clone()
        c = self.cell_size
        bias[2 * c: 3 * c] += 1
        order = torch.cat([torch.arange(0, c), torch.arange(2 * c, 3 * c), torch.arange(c, 2 * c), torch.arange(3 * c, 4 * c)])
        weight, bias = weight[order], bias[order]
        expected = (4 * c, self.input_size + self.hidden_size)
        if tuple(weight.shape) != expected:
            raise ValueError(f"LSTM weight W_0 has shape {tuple(weight.shape)[::-1]}; the options file needs {expected[::-1]}")
        self.input_linearity.weight.copy_(weight[:, : self.input_size])
        self.state_linearity.weight.copy_(weight[:, self.input_size:])
        self.state_linearity.bias.copy_(bias)
        projection = torch.from_numpy(cell["W_P_0"][...]).T
        if projection.shape != self.state_projection.weight.shape:
            raise ValueError(f"LSTM weight W_P_0 has shape {tuple(projection.shape)[::-1]}; the options file "
                             f"needs {tuple(self.state_projection.weight.shape)[::-1]}")
        self.state_projection.weight.copy_(projection)


class ElmoLstm(torch.nn.Module):
    """``num_layers`` forward and as many backward cells; the input width is ``input_size`` (``hidden_size``,
    ELMo's, when not given)."""

    def __init__(self, hidden_size: int, cell_size: int, num_layers: int, memory_cell_clip_value: float | None = None,
                 state_projection_clip_value: float | None = None, requires_grad: bool = False,
                 input_size: int | None = None, recurrent_dropout_probability: float = 0.0) -> None:
        super().__init__()
        self.hidden_size, self.cell_size = hidden_size, cell_size
        self.input_size = hidden_size if input_size is None else input_size

        def cells(go_forward: bool) -> torch.nn.ModuleList:
            return torch.nn.ModuleList(
                LstmCellWithProjection(self.input_size if index == 0 else hidden_size, hidden_size, cell_size,
                                       go_forward, memory_cell_clip_value, state_projection_clip_value,
                                       recurrent_dropout_probability) for index in range(num_layers))

        self.forward_layers, self.backward_layers = cells(True), cells(False)
        self.requires_grad_(requires_grad)
        self._states: State | None = None

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(batch, steps, hidden_size) and its mask → (num_layers, batch, steps, 2 * hidden_size): each
        layer's forward and backward outputs side by side."""
        lengths = mask.sum(-1)
        initial = self._initial_states(inputs.shape[0], inputs.device)
        forward_input = backward_input = inputs
        outputs, hiddens, memories = [], [], []
        for index, (forward_cell, backward_cell) in enumerate(zip(self.forward_layers, self.backward_layers)):
            forward_state = backward_state = None
            if initial is not None:
                hidden, memory = initial[0][index], initial[1][index]
                forward_state = (hidden[:, : self.hidden_size], memory[:, : self.cell_size])
                backward_state = (hidden[:, self.hidden_size:], memory[:, self.cell_size:])
            forward_output, forward_state = forward_cell(forward_input, lengths, forward_state)
            backward_output, backward_state = backward_cell(backward_input, lengths, backward_state)
            if index > 0:  # the skip connection
                forward_output, backward_output = forward_output + forward_input, backward_output + backward_input
            outputs.append(torch.cat([forward_output, backward_output], -1))
            hiddens.append(torch.cat([forward_state[0], backward_state[0]], -1))
            memories.append(torch.cat([forward_state[1], backward_state[1]], -1))
            forward_input, backward_input = forward_output, backward_output
        self._update_states((torch.stack(hiddens), torch.stack(memories)))
        return torch.stack(outputs)

    def reset_states(self) -> None:
        self._states = None

    def _initial_states(self, batch: int, device: torch.device) -> State | None:
        """The carried states for ``batch`` rows: the first rows of what is held, zeros for rows beyond
        it (which are then held too, as AllenNLP does)."""
        if self._states is None:
            return None
        held = tuple(state.to(device) for state in self._states)
        missing = batch - held[0].shape[1]
        if missing > 0:
            held = tuple(torch.cat([state, state.new_zeros(state.shape[0], missing, state.shape[2])], 1) for state in held)
        self._states = held
        return tuple(state[:, :batch] for state in held)

    def _update_states(self, final: State) -> None:
        """Hold each row's final state; a row whose new first-layer state is all zero (no real step)
        keeps what it held. Detached, so a batch's graph is not kept alive by the next."""
        final = tuple(state.detach() for state in final)
        if self._states is None:
            self._states = final
            return
        batch = final[0].shape[1]
        updated = []
        for held, new in zip(self._states, final):
            unused = (new[0].sum(-1) == 0).to(new.dtype).view(1, batch, 1)
            rows = held[:, :batch]
            merged = new + rows * unused
            updated.append(torch.cat([merged, held[:, batch:]], 1) if held.shape[1] > batch else merged)
        self._states = (updated[0], updated[1])

    @torch.no_grad()
    def load_weights(self, weights: Any) -> None:
        """From an open h5py file: direction ``RNN_0`` is the forward stack, ``RNN_1`` the backward one."""
        for direction, cells in enumerate((self.forward_layers, self.backward_layers)):
            for index, cell in enumerate(cells):
                cell.load_weights(weights[f"RNN_{direction}"]["RNN"]["MultiRNNCell"][f"Cell{index}"]["LSTMCell"])
