"""``allennlp.modules.lstm_cell_with_projection``: AllenNLP's ``LstmCellWithProjection`` (its argument order,
lengths as a list, states shaped (1, batch, width) as PyTorch's LSTM takes and gives them), over distrain's cell."""

from __future__ import annotations

import torch

from distrain.modules.elmo_lstm import LstmCellWithProjection as _LstmCellWithProjection

State = tuple[torch.Tensor, torch.Tensor]


class LstmCellWithProjection(_LstmCellWithProjection):
    def __init__(self, input_size: int, hidden_size: int, cell_size: int, go_forward: bool = True,
                 recurrent_dropout_probability: float = 0.0, memory_cell_clip_value: float | None = None,
                 state_projection_clip_value: float | None = None) -> None:
        super().__init__(input_size, hidden_size, cell_size, go_forward, memory_cell_clip_value,
                         state_projection_clip_value, recurrent_dropout_probability)

    def forward(self, inputs: torch.Tensor, batch_lengths: list[int] | torch.Tensor,
                initial_state: State | None = None) -> tuple[torch.Tensor, State]:
        """(batch, steps, input_size) → outputs (batch, steps, hidden_size), zero past each row's length, and
        the final (hidden, memory), each (1, batch, width)."""
        lengths = torch.as_tensor(batch_lengths, device=inputs.device)
        state = None if initial_state is None else (initial_state[0].squeeze(0), initial_state[1].squeeze(0))
        outputs, (hidden, memory) = super().forward(inputs, lengths, state)
        return outputs, (hidden.unsqueeze(0), memory.unsqueeze(0))


__all__ = [
    "LstmCellWithProjection",
]
