"""Attentions with AllenNLP's names, one per file (the base is :mod:`distrain.modules.attention`)."""
