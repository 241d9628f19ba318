"""``allennlp.modules.seq2vec_encoders.cls_pooler``."""

from distrain.modules.seq2vec_encoders.cls_pooler import ClsPooler

__all__ = [
    "ClsPooler",
]
