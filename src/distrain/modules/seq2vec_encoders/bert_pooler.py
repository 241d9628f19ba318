"""AllenNLP's ``bert_pooler``: a pretrained BERT's own pooler (dense + tanh over [CLS]), weights included."""

from __future__ import annotations

import torch

from distrain.config.constraints import Probability
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.pretrained import PretrainedName, load_config, load_model


@Seq2VecEncoder.register("bert_pooler")
class BertPooler(Seq2VecEncoder):
    """``pretrained_model`` names the model whose pooler is taken; its input is that model's hidden size."""

    def __init__(self, pretrained_model: PretrainedName, requires_grad: bool = True, dropout: Probability = 0.0,
                 input_dim: int | None = None) -> None:
        super().__init__()
        model = load_model(pretrained_model)
        if getattr(model, "pooler", None) is None:
            raise ValueError(f"{pretrained_model} has no pooler")
        self.pooler = model.pooler
        for parameter in self.pooler.parameters():
            parameter.requires_grad = requires_grad
        self.dropout = torch.nn.Dropout(dropout)
        self.input_dim = self.output_dim = model.config.hidden_size

    @classmethod
    def input_dim_problem(cls, encoder: Lazy, input_dim: int) -> str | None:
        hidden = load_config(encoder.argument("pretrained_model")).hidden_size
        return None if hidden == input_dim else f"takes {hidden}-wide vectors (the hidden size of its pretrained_model)"

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return load_config(encoder.argument("pretrained_model")).hidden_size

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.dropout(self.pooler(inputs))
