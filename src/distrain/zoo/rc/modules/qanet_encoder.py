"""allennlp-models' ``qanet_encoder`` (Yu et al., 2018): QANet's stack of encoder blocks, and one such block
(``qanet_encoder_block``).

A block adds positions to its input, then runs ``num_convs`` depthwise separable convolutions, one multi-head self
attention and a two-layer feedforward, each as a residual sublayer over a layer-normed input
(:class:`~distrain.modules.residual_with_layer_dropout.ResidualWithLayerDropout`: sublayer ``i`` of ``n`` is
skipped with probability ``layer_dropout_undecayed_prob × i / n`` in training). The stack projects its input to
``hidden_dim`` first when the two widths differ. The parameter names are AllenNLP's, so its archives load.
"""

from __future__ import annotations

import torch

from distrain.config.constraints import NonNegativeInt, PositiveInt, Probability
from distrain.config.lazy import Lazy
from distrain.zoo.rc.modules.depthwise_separable_conv import DepthwiseSeparableConv1d
from distrain.modules.feedforward import FeedForward
from distrain.zoo.rc.modules.positional_features import add_positional_features
from distrain.modules.residual_with_layer_dropout import ResidualWithLayerDropout
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.seq2seq_encoders.multi_head_self_attention import MultiHeadSelfAttention
from distrain.modules.sizes import resolve_input_dim


@Seq2SeqEncoder.register("qanet_encoder")
class QaNetEncoder(Seq2SeqEncoder):
    """``num_blocks`` blocks of the same shape, one after the other; the output is ``hidden_dim`` wide."""

    input_size_key = "input_dim"
    runtime_args = ()  # AllenNLP states input_dim in the config; an owning model may pass it instead

    def __init__(self, hidden_dim: PositiveInt, attention_projection_dim: PositiveInt,
                 feedforward_hidden_dim: PositiveInt, num_blocks: PositiveInt, num_convs_per_block: NonNegativeInt,
                 conv_kernel_size: PositiveInt, num_attention_heads: PositiveInt, input_dim: PositiveInt | None = None,
                 use_positional_encoding: bool = True, dropout_prob: Probability = 0.1,
                 layer_dropout_undecayed_prob: Probability = 0.1, attention_dropout_prob: Probability = 0.0) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(None, input_dim, "input_dim")
        self.output_dim = hidden_dim
        self.input_projection_layer = (torch.nn.Linear(self.input_dim, hidden_dim) if self.input_dim != hidden_dim
                                       else torch.nn.Identity())
        self.encoder_blocks = torch.nn.ModuleList(
            QaNetEncoderBlock(hidden_dim, attention_projection_dim, feedforward_hidden_dim, num_convs_per_block,
                              conv_kernel_size, num_attention_heads, hidden_dim, use_positional_encoding,
                              dropout_prob, layer_dropout_undecayed_prob, attention_dropout_prob)
            for _ in range(num_blocks))

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("hidden_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        output = self.input_projection_layer(inputs)
        for block in self.encoder_blocks:
            output = block(output, mask)
        return output


@Seq2SeqEncoder.register("qanet_encoder_block")
class QaNetEncoderBlock(Seq2SeqEncoder):
    """One block: its input must be ``hidden_dim`` wide (AllenNLP's check)."""

    input_size_key = "input_dim"
    runtime_args = ()

    def __init__(self, hidden_dim: PositiveInt, attention_projection_dim: PositiveInt,
                 feedforward_hidden_dim: PositiveInt, num_convs: NonNegativeInt, conv_kernel_size: PositiveInt,
                 num_attention_heads: PositiveInt, input_dim: PositiveInt | None = None,
                 use_positional_encoding: bool = True, dropout_prob: Probability = 0.1,
                 layer_dropout_undecayed_prob: Probability = 0.1, attention_dropout_prob: Probability = 0.0) -> None:
        super().__init__()
        self.input_dim = resolve_input_dim(None, input_dim, "input_dim")
        if self.input_dim != hidden_dim:
            raise ValueError(f"input_dim is {self.input_dim}, but a block's input must be hidden_dim ({hidden_dim}) "
                             "wide")
        self.output_dim = hidden_dim
        self.use_positional_encoding = use_positional_encoding
        self.conv_norm_layers = torch.nn.ModuleList(torch.nn.LayerNorm(hidden_dim) for _ in range(num_convs))
        self.conv_layers = torch.nn.ModuleList(DepthwiseSeparableConv1d(hidden_dim, conv_kernel_size)
                                               for _ in range(num_convs))
        self.attention_norm_layer = torch.nn.LayerNorm(hidden_dim)
        self.attention_layer = MultiHeadSelfAttention(
            num_attention_heads, attention_projection_dim, attention_projection_dim, input_dim=hidden_dim,
            attention_dropout_prob=attention_dropout_prob)
        self.feedforward_norm_layer = torch.nn.LayerNorm(hidden_dim)
        self.feedforward = FeedForward([feedforward_hidden_dim, hidden_dim], input_dim=hidden_dim,
                                       activations=["relu", "linear"], dropout=dropout_prob, num_layers=2)
        self.dropout = torch.nn.Dropout(dropout_prob)
        self.residual_with_layer_dropout = ResidualWithLayerDropout(layer_dropout_undecayed_prob)

    @classmethod
    def configured_output_dim(cls, encoder: Lazy, input_dim: int | None) -> int | None:
        return encoder.argument("hidden_dim")

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        output = add_positional_features(inputs) if self.use_positional_encoding else inputs
        total = len(self.conv_layers) + 2
        sublayers = list(zip(self.conv_norm_layers, self.conv_layers))
        sublayers += [(self.attention_norm_layer, self.attention_layer), (self.feedforward_norm_layer, self.feedforward)]
        for index, (norm, layer) in enumerate(sublayers, start=1):
            normed = self.dropout(norm(output))
            produced = layer(normed, mask) if layer is self.attention_layer else layer(normed)
            output = self.residual_with_layer_dropout(output, self.dropout(produced), index, total)
        return output
