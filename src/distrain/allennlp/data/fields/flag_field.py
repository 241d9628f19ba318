"""``allennlp.data.fields.flag_field``."""

from distrain.data.label_fields import FlagField

__all__ = ["FlagField"]
