"""Bias mitigators (see :mod:`distrain.fairness.bias_mitigator`), one file each."""
