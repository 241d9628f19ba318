"""``allennlp.modules.seq2vec_encoders.bert_pooler``."""

from distrain.modules.seq2vec_encoders.bert_pooler import BertPooler

__all__ = [
    "BertPooler",
]
