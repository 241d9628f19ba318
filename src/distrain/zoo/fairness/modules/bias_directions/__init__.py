"""Bias directions (see :mod:`distrain.zoo.fairness.modules.bias_direction`), one file each."""
