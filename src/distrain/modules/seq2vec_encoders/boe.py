"""``boe``: the sum or mean of a sequence's unmasked embeddings (distrain's short form and AllenNLP's alias)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2VecEncoder.register("boe")
class BagOfEmbeddings(Seq2VecEncoder):
    """Sum (or mean, with ``averaged``) of the unmasked embeddings, in two forms.

    distrain's short form, ``{"type": "boe"}``, takes its width from the model and averages unless told
    otherwise. AllenNLP's ``boe`` is another name of its ``bag_of_embeddings``: it states ``embedding_dim``
    and sums unless ``averaged``. A config that states ``embedding_dim`` is AllenNLP's form (distrain's
    ``boe`` refused the key before), so ``averaged`` then defaults to AllenNLP's sum: the moved config
    trains the same model.
    """

    input_size_key = "embedding_dim"

    def __init__(self, embedding_dim: PositiveInt | None = None, averaged: bool | None = None,
                 input_dim: int | None = None) -> None:
        super().__init__()
        self.averaged = embedding_dim is None if averaged is None else averaged
        self.input_dim = self.output_dim = resolve_input_dim(embedding_dim, input_dim, "embedding_dim")

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim if input_dim is not None else encoder.argument("embedding_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is None:  # AllenNLP's encoders take a sequence without padding so
            mask = torch.ones(inputs.shape[:2], dtype=torch.bool, device=inputs.device)
        weights = mask.unsqueeze(-1).to(inputs.dtype)
        summed = (inputs * weights).sum(1)
        if not self.averaged:
            return summed
        return summed / weights.sum(1).clamp(min=1.0)
