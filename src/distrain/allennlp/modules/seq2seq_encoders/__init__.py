"""``allennlp.modules.seq2seq_encoders``: encoders that keep one vector per step."""

from distrain.allennlp.modules.seq2seq_encoders.pytorch_seq2seq_wrapper import PytorchSeq2SeqWrapper
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2seq_encoders.alternating_lstm import StackedAlternatingLstmSeq2SeqEncoder
from distrain.modules.seq2seq_encoders.compose import ComposeEncoder
from distrain.modules.seq2seq_encoders.feedforward import FeedForwardEncoder
from distrain.modules.seq2seq_encoders.gated_cnn import GatedCnnEncoder
from distrain.modules.seq2seq_encoders.multi_head_self_attention import MultiHeadSelfAttention
from distrain.modules.seq2seq_encoders.pass_through import PassThroughEncoder
from distrain.modules.seq2seq_encoders.pytorch_transformer import PytorchTransformer
from distrain.modules.seq2seq_encoders.rnn import LstmSeq2SeqEncoder, GruSeq2SeqEncoder
from distrain.modules.seq2seq_encoders.stacked_bidirectional_lstm import StackedBidirectionalLstmSeq2SeqEncoder

__all__ = [
    "ComposeEncoder", "FeedForwardEncoder", "GatedCnnEncoder", "GruSeq2SeqEncoder", "LstmSeq2SeqEncoder", "MultiHeadSelfAttention",
    "PassThroughEncoder", "PytorchSeq2SeqWrapper", "PytorchTransformer", "Seq2SeqEncoder",
    "StackedAlternatingLstmSeq2SeqEncoder", "StackedBidirectionalLstmSeq2SeqEncoder",
]
