"""``allennlp.modules.input_variational_dropout``."""

from distrain.modules.input_variational_dropout import InputVariationalDropout

__all__ = [
    "InputVariationalDropout",
]
