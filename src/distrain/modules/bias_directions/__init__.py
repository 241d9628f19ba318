"""Bias directions (see :mod:`distrain.modules.bias_direction`), one file each."""
