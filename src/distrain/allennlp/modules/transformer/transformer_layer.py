"""One BERT layer: ``AttentionLayer`` (attention and its residual output block) and ``TransformerLayer`` (that,
an optional cross-attention over an encoder's states, and the feed-forward block)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.activation_layer import ActivationLayer
from distrain.allennlp.modules.transformer.attention_module import AttentionOutput, SelfAttention
from distrain.allennlp.modules.transformer.output_layer import OutputLayer
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import FloatT


def bert_sizes(config: Any) -> dict:
    """The sizes and dropouts every BERT-like config gives the same way, under the toolkit's names."""
    return {"hidden_size": config.hidden_size, "num_attention_heads": config.num_attention_heads,
            "attention_dropout": config.attention_probs_dropout_prob, "hidden_dropout": config.hidden_dropout_prob}


class AttentionLayer(TransformerModule, FromParams):
    """``output(self(x), x)``: BERT's ``BertAttention``, self- or (in a decoder) cross-attention."""

    _pretrained_relevant_module = "encoder.layer.0.attention"
    _pretrained_mapping = {"layer": "layers"}

    def __init__(self, hidden_size: int, num_attention_heads: int, attention_dropout: float = 0.0,
                 hidden_dropout: float = 0.0, is_cross_attention: bool = False, is_decoder: bool = False):
        super().__init__()
        self.self = SelfAttention(hidden_size, num_attention_heads, attention_dropout,
                                  is_cross_attention=is_cross_attention, is_decoder=is_decoder)
        self.output = OutputLayer(hidden_size, hidden_size, hidden_dropout)

    def forward(self, input_tensor: torch.Tensor, attention_mask: Optional[torch.BoolTensor] = None,
                head_mask: Optional[torch.Tensor] = None, encoder_hidden_states: Optional[torch.Tensor] = None,
                encoder_attention_mask: Optional[torch.BoolTensor] = None,
                output_attentions: bool = False) -> AttentionOutput:
        """Attends over ``encoder_hidden_states`` (with their mask) when given, else over ``input_tensor``."""
        if encoder_hidden_states is not None:
            attention_mask = encoder_attention_mask
        attended = self.self(input_tensor, source_states=encoder_hidden_states, attention_mask=attention_mask,
                             head_mask=head_mask, output_attentions=output_attentions)
        return AttentionOutput(self.output(attended.hidden_states, input_tensor), attended.key_value_state,
                               attended.position_bias, attended.attention_probs)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "AttentionLayer":
        return cls(**{**bert_sizes(config), **kwargs})


@dataclass
class TransformerLayerOutput:
    """A layer's output states and, when asked for, its attention probabilities."""

    hidden_states: FloatT
    self_attention_probs: Optional[FloatT] = None
    cross_attention_probs: Optional[FloatT] = None


class TransformerLayer(TransformerModule, FromParams):
    """BERT's ``BertLayer``; ``add_cross_attention`` adds a decoder's attention over an encoder's states."""

    _pretrained_relevant_module = "encoder.layer.0"
    _pretrained_mapping = {"layer": "layers", "intermediate_act_fn": "act_fn", "crossattention": "cross_attention"}

    def __init__(self, hidden_size: int, intermediate_size: int, num_attention_heads: int,
                 attention_dropout: float = 0.0, hidden_dropout: float = 0.0,
                 activation: Union[str, torch.nn.Module] = "relu", add_cross_attention: bool = False):
        super().__init__()
        sizes = {"hidden_size": hidden_size, "num_attention_heads": num_attention_heads,
                 "attention_dropout": attention_dropout, "hidden_dropout": hidden_dropout}
        self.attention = AttentionLayer(**sizes)
        if add_cross_attention:
            self.cross_attention = AttentionLayer(**sizes, is_cross_attention=True, is_decoder=True)
        self.intermediate = ActivationLayer(hidden_size=hidden_size, intermediate_size=intermediate_size,
                                            activation=activation)
        self.output = OutputLayer(input_size=intermediate_size, hidden_size=hidden_size, dropout=hidden_dropout)

    def get_output_dim(self) -> int:
        return self.output.get_output_dim()

    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                head_mask: Optional[torch.Tensor] = None, encoder_hidden_states: Optional[torch.Tensor] = None,
                encoder_attention_mask: Optional[torch.Tensor] = None,
                output_attentions: bool = False) -> TransformerLayerOutput:
        """``hidden_states`` ``(batch, length, hidden)``; ``encoder_hidden_states`` need the cross-attention."""
        attended = self.attention(hidden_states, attention_mask, head_mask, output_attentions=output_attentions)
        states, cross_probabilities = attended.hidden_states, None
        if encoder_hidden_states is not None:
            assert hasattr(self, "cross_attention"), (
                f"If `encoder_hidden_states` are passed, {self} has to be instantiated with cross-attention layers "
                "by setting `config.add_cross_attention=True`")
            crossed = self.cross_attention(states, attention_mask, head_mask, encoder_hidden_states,
                                           encoder_attention_mask, output_attentions)
            states, cross_probabilities = crossed.hidden_states, crossed.attention_probs
        output = self.output(self.intermediate(states), states)
        return TransformerLayerOutput(output, attended.attention_probs, cross_probabilities)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "TransformerLayer":
        return cls(**{**bert_sizes(config), "intermediate_size": config.intermediate_size,
                      "activation": config.hidden_act, "add_cross_attention": config.add_cross_attention, **kwargs})
