"""Bias directions (see :mod:`distrain.fairness.bias_direction`), one file each."""
