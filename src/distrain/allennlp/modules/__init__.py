"""``allennlp.modules``: the building blocks of AllenNLP models, under AllenNLP's names."""

from distrain.allennlp.modules.conditional_random_field import ConditionalRandomField
from distrain.modules.attention import Attention
from distrain.modules.elmo import Elmo
from distrain.modules.feedforward import FeedForward
from distrain.modules.gated_sum import GatedSum
from distrain.modules.highway import Highway
from distrain.modules.input_variational_dropout import InputVariationalDropout
from distrain.modules.layer_norm import LayerNorm
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.maxout import Maxout
from distrain.modules.residual_with_layer_dropout import ResidualWithLayerDropout
from distrain.modules.scalar_mix import ScalarMix
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder
from distrain.modules.time_distributed import TimeDistributed
from distrain.modules.token_embedder import TokenEmbedder
from distrain.allennlp.modules.token_embedders.embedding import Embedding
from distrain.zoo.lm.modules.softmax_loss import SoftmaxLoss
from distrain.zoo.pair_classification.modules.bimpm_matching import BiMpmMatching

__all__ = [
    "Attention", "BiMpmMatching", "ConditionalRandomField", "Elmo", "Embedding", "FeedForward", "GatedSum",
    "Highway", "InputVariationalDropout", "LayerNorm", "MatrixAttention", "Maxout", "ResidualWithLayerDropout",
    "ScalarMix", "Seq2SeqEncoder", "Seq2VecEncoder", "SoftmaxLoss", "TextFieldEmbedder", "TimeDistributed",
    "TokenEmbedder",
]
