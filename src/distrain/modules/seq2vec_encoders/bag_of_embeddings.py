"""AllenNLP's ``bag_of_embeddings``: the SUM of the unmasked embeddings unless ``averaged``.

Its other AllenNLP name, ``boe``, is distrain's short-form encoder, which also takes AllenNLP's arguments
(see :class:`~distrain.modules.seq2vec_encoders.boe.BagOfEmbeddings`); under this name the sum is always the default.
"""

from __future__ import annotations

from distrain.config.constraints import PositiveInt
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.seq2vec_encoders.boe import BagOfEmbeddings


@Seq2VecEncoder.register("bag_of_embeddings")
class BagOfEmbeddingsEncoder(BagOfEmbeddings):
    """AllenNLP's ``bag_of_embeddings``: the sum of the unmasked embeddings (their mean with ``averaged``)."""

    def __init__(self, embedding_dim: PositiveInt | None = None, averaged: bool = False,
                 input_dim: int | None = None) -> None:
        super().__init__(embedding_dim, averaged, input_dim)
