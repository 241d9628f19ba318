"""``allennlp.modules.elmo_lstm``: AllenNLP's ``ElmoLstm`` (its argument order, an ``input_size`` of its own),
distrain's ELMo biLM stack with the state it carries between batches."""

from __future__ import annotations

from distrain.modules.elmo_lstm import ElmoLstm as _ElmoLstm


class ElmoLstm(_ElmoLstm):
    def __init__(self, input_size: int, hidden_size: int, cell_size: int, num_layers: int,
                 requires_grad: bool = False, recurrent_dropout_probability: float = 0.0,
                 memory_cell_clip_value: float | None = None,
                 state_projection_clip_value: float | None = None) -> None:
        super().__init__(hidden_size, cell_size, num_layers, memory_cell_clip_value, state_projection_clip_value,
                         requires_grad, input_size=input_size,
                         recurrent_dropout_probability=recurrent_dropout_probability)


__all__ = [
    "ElmoLstm",
]
