"""AllenNLP's ``cls_pooler``: the first token's vector (a transformer's [CLS]), or the last unmasked one."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2VecEncoder.register("cls_pooler")
class ClsPooler(Seq2VecEncoder):
    """The first token's vector (a transformer's [CLS]), or the last unmasked one."""

    input_size_key = "embedding_dim"

    def __init__(self, embedding_dim: PositiveInt | None = None, cls_is_last_token: bool = False,
                 input_dim: int | None = None) -> None:
        super().__init__()
        self.input_dim = self.output_dim = resolve_input_dim(embedding_dim, input_dim, "embedding_dim")
        self.cls_is_last_token = cls_is_last_token

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim if input_dim is not None else encoder.argument("embedding_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if not self.cls_is_last_token:
            return inputs[:, 0]
        last = (mask.long().sum(1) - 1).clamp(min=0)
        return inputs[torch.arange(inputs.shape[0], device=inputs.device), last]
