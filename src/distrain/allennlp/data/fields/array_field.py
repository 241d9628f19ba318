"""``allennlp.data.fields.array_field``: ``ArrayField``, AllenNLP's older name of ``TensorField``."""

from distrain.allennlp.data.fields.tensor_field import ArrayField

__all__ = ["ArrayField"]
