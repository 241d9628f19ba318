"""allennlp-models' ``multi_head_self_attention`` (Vaswani et al., 2017): every position attends to every unmasked
position, in ``num_heads`` heads, and the heads' values are projected back to the output width.

Queries, keys and values come from one linear layer (AllenNLP's ``_combined_projection``, so its weights load).
The scores are divided by ``sqrt(input_dim / num_heads)``, AllenNLP's scale (the input's width per head, not the
keys'), and masked keys are set to the lowest float before the softmax (its "memory efficient" form).
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.masked_softmax import masked_softmax
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2SeqEncoder.register("multi_head_self_attention")
class MultiHeadSelfAttention(Seq2SeqEncoder):
    """``attention_dim`` and ``values_dim`` (all heads together) must divide by ``num_heads``; the output is
    ``output_projection_dim`` wide, else as wide as the input."""

    input_size_key = "input_dim"
    runtime_args = ()  # AllenNLP states input_dim in the config; an owning model may pass it instead

    def __init__(self, num_heads: PositiveInt, attention_dim: PositiveInt, values_dim: PositiveInt,
                 input_dim: PositiveInt | None = None, output_projection_dim: PositiveInt | None = None,
                 attention_dropout_prob: Probability = 0.1) -> None:
        super().__init__()
        if problems := _head_problems(num_heads, attention_dim, values_dim):
            raise ValueError("; ".join(map(str, problems)))
        self.input_dim = resolve_input_dim(None, input_dim, "input_dim")
        self.output_dim = output_projection_dim or self.input_dim
        self.num_heads, self.attention_dim, self.values_dim = num_heads, attention_dim, values_dim
        self.combined_projection = torch.nn.Linear(self.input_dim, 2 * attention_dim + values_dim)
        self.scale = (self.input_dim // num_heads) ** 0.5
        self.output_projection = torch.nn.Linear(values_dim, self.output_dim)
        self.attention_dropout = torch.nn.Dropout(attention_dropout_prob)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return _head_problems(arguments["num_heads"], arguments["attention_dim"], arguments["values_dim"])

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("output_projection_dim") or input_dim or encoder.argument("input_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        batch, timesteps, _ = inputs.size()
        if mask is None:
            mask = inputs.new_ones(batch, timesteps, dtype=torch.bool)
        queries, keys, values = self.combined_projection(inputs).split(
            [self.attention_dim, self.attention_dim, self.values_dim], -1)
        queries, keys, values = (self._heads(part) for part in (queries, keys, values))
        scores = torch.bmm(queries / self.scale, keys.transpose(1, 2))
        head_mask = mask.repeat(1, self.num_heads).view(batch * self.num_heads, timesteps)
        attention = self.attention_dropout(masked_softmax(scores, head_mask, memory_efficient=True))
        outputs = torch.bmm(attention, values).view(batch, self.num_heads, timesteps, -1)
        return self.output_projection(outputs.transpose(1, 2).reshape(batch, timesteps, self.values_dim))

    def _heads(self, projected: torch.Tensor) -> torch.Tensor:
        """(batch, timesteps, heads × width) -> (batch × heads, timesteps, width), AllenNLP's head order."""
        batch, timesteps, width = projected.size()
        split = projected.view(batch, timesteps, self.num_heads, width // self.num_heads).transpose(1, 2)
        return split.reshape(batch * self.num_heads, timesteps, width // self.num_heads)


def _head_problems(num_heads: Any, attention_dim: Any, values_dim: Any) -> list[Problem]:
    if not all(isinstance(value, int) and value > 0 for value in (num_heads, attention_dim, values_dim)):
        return []
    return [Problem(key, f"is {value}, which the {num_heads} heads do not divide")
            for key, value in (("attention_dim", attention_dim), ("values_dim", values_dim)) if value % num_heads]
