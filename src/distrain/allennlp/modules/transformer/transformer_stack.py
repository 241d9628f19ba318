"""``TransformerStack``: BERT's encoder, a number of copies of one ``TransformerLayer``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Optional, Tuple, Union

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.transformer_layer import TransformerLayer, bert_sizes
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import FloatT, replicate_layers

logger = logging.getLogger(__name__)


@dataclass
class TransformerStackOutput:
    """The last layer's states and, when asked for, every layer's input states and attention probabilities."""

    final_hidden_states: FloatT
    all_hidden_states: Optional[Tuple] = None
    all_self_attentions: Optional[Tuple] = None
    all_cross_attentions: Optional[Tuple] = None


class TransformerStack(TransformerModule, FromParams):
    """``num_hidden_layers`` layers, each a copy of ``layer`` or of one built from the sizes given."""

    _pretrained_mapping = {"layer": "layers"}
    _pretrained_relevant_module = ["encoder", "bert.encoder", "roberta.encoder"]

    def __init__(self, num_hidden_layers: int, layer: Optional[TransformerLayer] = None,
                 hidden_size: Optional[int] = None, intermediate_size: Optional[int] = None,
                 num_attention_heads: int = 8, attention_dropout: float = 0.1, hidden_dropout: float = 0.1,
                 activation: Union[str, torch.nn.Module] = "relu", add_cross_attention: bool = False):
        super().__init__()
        if layer is not None:
            logger.warning("The `layer` argument has been specified. Any other arguments will be ignored.")
        else:
            assert hidden_size is not None and intermediate_size is not None, (
                "As the `layer` has not been provided, `hidden_size` and `intermediate_size` are required to create "
                "`TransformerLayer`s.")
            layer = TransformerLayer(hidden_size, intermediate_size, num_attention_heads, attention_dropout,
                                     hidden_dropout, activation, add_cross_attention)
        self._add_cross_attention = hasattr(layer, "cross_attention")
        self.layers = replicate_layers(layer, num_hidden_layers)

    def get_output_dim(self) -> int:
        return self.layers[-1].get_output_dim()

    def forward(self, hidden_states: torch.Tensor, attention_mask: Optional[torch.Tensor] = None,
                head_mask: Optional[torch.Tensor] = None, encoder_hidden_states: Optional[torch.Tensor] = None,
                encoder_attention_mask: Optional[torch.Tensor] = None, output_attentions: bool = False,
                output_hidden_states: bool = False) -> TransformerStackOutput:
        """``head_mask``, when given, has one entry per layer."""
        inputs, attentions, cross_attentions = [], [], []
        for index, layer in enumerate(self.layers):
            inputs.append(hidden_states)
            out = layer(hidden_states, attention_mask, None if head_mask is None else head_mask[index],
                        encoder_hidden_states, encoder_attention_mask, output_attentions)
            hidden_states = out.hidden_states
            attentions.append(out.self_attention_probs)
            cross_attentions.append(out.cross_attention_probs)
        return TransformerStackOutput(
            hidden_states, tuple(inputs + [hidden_states]) if output_hidden_states else None,
            tuple(attentions) if output_attentions else None,
            tuple(cross_attentions) if output_attentions and self._add_cross_attention else None)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "TransformerStack":
        return cls(**{**bert_sizes(config), "num_hidden_layers": config.num_hidden_layers,
                      "intermediate_size": config.intermediate_size, "activation": config.hidden_act,
                      "add_cross_attention": config.add_cross_attention, **kwargs})
