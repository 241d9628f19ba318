"""Bias mitigators (see :mod:`distrain.modules.bias_mitigator`), one file each."""
