"""``allennlp.common``: configuration errors, parameters, the registrable base and test helpers."""

from distrain.registry import Registrable

__all__ = ["Registrable"]
