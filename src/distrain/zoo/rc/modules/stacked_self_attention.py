"""allennlp-models' ``stacked_self_attention`` encoder (its ``rc`` package; Vaswani et al. 2017 as AllenNLP first
built it): each layer a feedforward (to ``hidden_dim``), a residual and layer norm where the widths allow,
then multi-head self-attention and another residual and layer norm; positions added first as AllenNLP's
``add_positional_features``. The names are AllenNLP's (``feedforward_0``, ``self_attention_0``, ...), so its
archives load."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.modules.feedforward import FeedForward
from distrain.modules.layer_norm import LayerNorm
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2seq_encoders.multi_head_self_attention import MultiHeadSelfAttention
from distrain.zoo.rc.modules.positional_features import add_positional_features


@Seq2SeqEncoder.register("stacked_self_attention")
class StackedSelfAttentionEncoder(Seq2SeqEncoder):
    """allennlp-models' self-attention encoder: per layer a feedforward and multi-head self-attention, each with
    a residual and layer norm."""

    input_size_key = "input_dim"
    runtime_args = ()

    def __init__(self, input_dim: PositiveInt, hidden_dim: PositiveInt, projection_dim: PositiveInt,
                 feedforward_hidden_dim: PositiveInt, num_layers: PositiveInt, num_attention_heads: PositiveInt,
                 use_positional_encoding: bool = True, dropout_prob: Probability = 0.1,
                 residual_dropout_prob: Probability = 0.2, attention_dropout_prob: Probability = 0.1) -> None:
        super().__init__()
        self.use_positional_encoding = use_positional_encoding
        self.num_layers = num_layers
        width = input_dim
        for layer in range(num_layers):
            feedforward = FeedForward([feedforward_hidden_dim, hidden_dim], input_dim=width, num_layers=2,
                                      activations=["relu", "linear"], dropout=dropout_prob)
            self.add_module(f"feedforward_{layer}", feedforward)
            self.add_module(f"feedforward_layer_norm_{layer}", LayerNorm(hidden_dim))
            attention = MultiHeadSelfAttention(num_attention_heads, projection_dim, projection_dim, input_dim=hidden_dim,
                                               attention_dropout_prob=attention_dropout_prob)
            self.add_module(f"self_attention_{layer}", attention)
            self.add_module(f"layer_norm_{layer}", LayerNorm(attention.get_output_dim()))
            width = hidden_dim
        self.dropout = torch.nn.Dropout(residual_dropout_prob)
        self.input_dim = input_dim
        self.output_dim = width

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        output = add_positional_features(inputs) if self.use_positional_encoding else inputs
        for layer in range(self.num_layers):
            residual = output
            fed = self.dropout(getattr(self, f"feedforward_{layer}")(output))
            if fed.size() == residual.size():
                fed = getattr(self, f"feedforward_layer_norm_{layer}")(fed + residual)
            attended = getattr(self, f"self_attention_{layer}")(fed, mask)
            output = getattr(self, f"layer_norm_{layer}")(self.dropout(attended) + fed)
        return output
