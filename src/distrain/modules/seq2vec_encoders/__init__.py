"""Seq2vec encoders with AllenNLP's names and semantics, one per file (the base is :mod:`distrain.modules.seq2vec_encoder`)."""
