"""``allennlp.data.fields.multilabel_field``."""

from distrain.data.label_fields import MultiLabelField

__all__ = ["MultiLabelField"]
