"""Bias mitigators (see :mod:`distrain.zoo.fairness.modules.bias_mitigator`), one file each."""
