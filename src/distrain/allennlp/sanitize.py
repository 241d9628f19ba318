"""AllenNLP's ``JsonDict`` and ``sanitize`` (see :mod:`distrain.predictors.sanitize`)."""

from distrain.predictors.sanitize import JsonDict, sanitize

__all__ = ["JsonDict", "sanitize"]
