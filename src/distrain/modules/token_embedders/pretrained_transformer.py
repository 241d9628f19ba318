"""AllenNLP's ``pretrained_transformer`` token embedder: the transformer's last hidden states for the
word pieces of the ``pretrained_transformer`` indexer."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.pretrained_transformer import PretrainedTransformerEncoder
from distrain.modules.token_embedder import TokenEmbedder
from distrain.pretrained import PretrainedName, load_config


@TokenEmbedder.register("pretrained_transformer")
class PretrainedTransformerEmbedder(TokenEmbedder):
    """``train_parameters: false`` freezes the transformer; ``eval_mode`` also keeps its dropout off.
    ``max_length`` is AllenNLP's segment length; the ``pretrained_transformer`` indexer refuses longer
    sequences, so none reaches the embedder and it is accepted here for AllenNLP's configs."""

    #: AllenNLP's name for the transformer (see :mod:`distrain.experiment.archive.allennlp`)
    allennlp_names = {"transformer_model": "encoder.transformer"}

    def __init__(self, model_name: PretrainedName, train_parameters: bool = True, eval_mode: bool = False,
                 gradient_checkpointing: bool | None = None, last_layer_only: bool = True,
                 max_length: PositiveInt | None = None) -> None:
        super().__init__()
        self.model_name = model_name
        self.max_length = max_length
        if not last_layer_only:
            raise ValueError("last_layer_only: false (a scalar mix of layers) is not supported")
        self.encoder = PretrainedTransformerEncoder(model_name, gradient_checkpointing=bool(gradient_checkpointing))
        for parameter in self.encoder.parameters():
            parameter.requires_grad = train_parameters
        self.eval_mode = eval_mode
        self.output_dim = self.encoder.output_dim

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        return load_config(recipe.argument("model_name")).hidden_size

    def train(self, mode: bool = True) -> PretrainedTransformerEmbedder:
        super().train(mode)
        if self.eval_mode:
            self.encoder.eval()
        return self

    def forward(self, token_ids: torch.Tensor, mask: torch.Tensor, type_ids: torch.Tensor | None = None) -> torch.Tensor:
        return self.encoder.transformer(input_ids=token_ids, attention_mask=mask.long(),
                                        token_type_ids=type_ids).last_hidden_state
