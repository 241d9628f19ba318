"""Seq2seq encoders with AllenNLP's names, one per file (the base is :mod:`distrain.modules.seq2seq_encoder`)."""
