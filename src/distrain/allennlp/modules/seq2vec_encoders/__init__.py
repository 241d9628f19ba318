"""``allennlp.modules.seq2vec_encoders``: encoders that give one vector per sequence."""

from distrain.allennlp.modules.seq2vec_encoders.pytorch_seq2vec_wrapper import PytorchSeq2VecWrapper
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.seq2vec_encoders.bag_of_embeddings import BagOfEmbeddingsEncoder
from distrain.modules.seq2vec_encoders.bert_pooler import BertPooler
from distrain.modules.seq2vec_encoders.cls_pooler import ClsPooler
from distrain.modules.seq2vec_encoders.cnn import CnnEncoder
from distrain.modules.seq2vec_encoders.cnn_highway import CnnHighwayEncoder
from distrain.modules.seq2vec_encoders.stacked_bidirectional_lstm import StackedBidirectionalLstmSeq2VecEncoder
from distrain.modules.seq2vec_encoders.rnn import LstmEncoder as LstmSeq2VecEncoder, GruEncoder as GruSeq2VecEncoder

__all__ = [
    "PytorchSeq2VecWrapper", "BagOfEmbeddingsEncoder", "BertPooler", "ClsPooler", "CnnEncoder", "CnnHighwayEncoder", "GruSeq2VecEncoder",
    "LstmSeq2VecEncoder", "Seq2VecEncoder", "StackedBidirectionalLstmSeq2VecEncoder",
]
