"""AllenNLP's ``bag_of_embeddings``: the SUM of the unmasked embeddings unless ``averaged``.

distrain's older ``boe`` averages by default; the AllenNLP name keeps AllenNLP's default, so a config
moved from AllenNLP trains the same model.
"""

from __future__ import annotations

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.modules.seq2vec import BagOfEmbeddings, Seq2VecEncoder
from distrain.modules.sizes import resolve_input_dim


@Seq2VecEncoder.register("bag_of_embeddings")
class BagOfEmbeddingsEncoder(BagOfEmbeddings):
    input_size_key = "embedding_dim"

    def __init__(self, embedding_dim: PositiveInt | None = None, averaged: bool = False,
                 input_dim: int | None = None) -> None:
        super().__init__(resolve_input_dim(embedding_dim, input_dim, "embedding_dim"), averaged)

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return input_dim if input_dim is not None else encoder.argument("embedding_dim")
