"""``BiModalEncoder``: ViLBERT's encoder, two transformer stacks joined by co-attention connection layers.

Stream 1 (text, say) runs its layers up to ``biattention_id1[k]`` and stream 2 (image regions) up to
``biattention_id2[k]``; then connection layer ``k`` lets each attend over the other, and so on; whatever layers
are left run after the last connection. The first ``fixed_layer1``/``fixed_layer2`` layers of a stream run without
gradients (frozen pretrained layers). The first stack loads from a BERT encoder; the second and the connections
are new, so a checkpoint may lack them.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.bimodal_connection_layer import BiModalConnectionLayer
from distrain.allennlp.modules.transformer.transformer_layer import TransformerLayer
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import replicate_layers


def _pair_up(first: torch.Tensor, second: torch.Tensor, mask1: torch.Tensor, mask2: torch.Tensor,
             co_mask: Optional[torch.Tensor]) -> Tuple[torch.Tensor, ...]:
    """Every example of stream 1 with every example of stream 2 (``in_batch_pairs``): a batch of batch² pairs."""
    batch = first.shape[0]

    def repeat(values: torch.Tensor, axis: int) -> torch.Tensor:
        shape = (batch, batch, *values.shape[1:])
        return values.unsqueeze(axis).expand(shape).contiguous().view(batch * batch, *values.shape[1:])

    return (repeat(first, 1), repeat(second, 0), repeat(mask1, 1), repeat(mask2, 0),
            None if co_mask is None else repeat(co_mask, 1))


class BiModalEncoder(TransformerModule, FromParams):
    """Returns both streams' states after each connection layer (``output_all_encoded_layers``) or at the end,
    stacked on a last axis."""

    _pretrained_mapping = {"layer": "layers1"}
    _pretrained_relevant_module = ["encoder", "bert.encoder"]
    _pretrained_allow_missing = [r"^layers2\..*", r"^c_layer\..*"]

    def __init__(self, num_hidden_layers1: int = 12, num_hidden_layers2: int = 12, hidden_size1: int = 1024,
                 hidden_size2: int = 1024, combined_hidden_size: int = 1024, intermediate_size1: int = 1024,
                 intermediate_size2: int = 1024, num_attention_heads1: int = 8, num_attention_heads2: int = 8,
                 combined_num_attention_heads: int = 8, attention_dropout1: float = 0.1,
                 hidden_dropout1: float = 0.1, attention_dropout2: float = 0.1, hidden_dropout2: float = 0.1,
                 activation: str = "relu", biattention_id1: Optional[List[int]] = None,
                 biattention_id2: Optional[List[int]] = None, fixed_layer1: int = 0, fixed_layer2: int = 0,
                 fast_mode: bool = False, with_coattention: bool = True, in_batch_pairs: bool = False):
        super().__init__()
        self.FAST_MODE = fast_mode
        self.with_coattention = with_coattention
        self.biattention_id1 = biattention_id1 or [1]
        self.biattention_id2 = biattention_id2 or [1]
        self.in_batch_pairs = in_batch_pairs
        self.fixed_layer1 = fixed_layer1
        self.fixed_layer2 = fixed_layer2
        self.combined_size = combined_hidden_size
        self.hidden_size1 = hidden_size1
        self.hidden_size2 = hidden_size2
        layer1 = TransformerLayer(hidden_size1, intermediate_size1, num_attention_heads1, attention_dropout1,
                                  hidden_dropout1, activation)
        layer2 = TransformerLayer(hidden_size2, intermediate_size2, num_attention_heads2, attention_dropout2,
                                  hidden_dropout2, activation)
        connection = BiModalConnectionLayer(hidden_size1, hidden_size2, combined_hidden_size, intermediate_size1,
                                            intermediate_size2, combined_num_attention_heads, hidden_dropout1,
                                            hidden_dropout2, activation)
        self.layers1 = replicate_layers(layer1, num_hidden_layers1)
        self.layers2 = replicate_layers(layer2, num_hidden_layers2)
        self.c_layer = replicate_layers(connection, len(self.biattention_id2))

    @staticmethod
    def _run(layers: torch.nn.ModuleList, states: torch.Tensor, mask: torch.Tensor, start: int, end: int,
             fixed: int) -> torch.Tensor:
        """Layers ``start`` to ``end`` of a stream, those below ``fixed`` without gradients."""
        for index in range(start, end):
            with torch.set_grad_enabled(torch.is_grad_enabled() and index >= fixed):
                states = layers[index](states, mask).hidden_states
        return states

    def forward(self, embedding1: torch.Tensor, embedding2: torch.Tensor, attention_mask1: torch.Tensor,
                attention_mask2: torch.Tensor, co_attention_mask: Optional[torch.Tensor] = None,
                output_all_encoded_layers: bool = True) -> Tuple[torch.Tensor, torch.Tensor]:
        """``embedding1`` ``(batch, words, hidden1)``, ``embedding2`` ``(batch, regions, hidden2)`` and their
        masks (broadcastable, ``(batch, 1, 1, length)``)."""
        start1 = start2 = 0
        encoded1: List[torch.Tensor] = []
        encoded2: List[torch.Tensor] = []
        for count, (end1, end2) in enumerate(zip(self.biattention_id1, self.biattention_id2)):
            assert self.fixed_layer1 <= end1 and self.fixed_layer2 <= end2, "fixed layers must come before a connection"
            embedding1 = self._run(self.layers1, embedding1, attention_mask1, start1, end1, self.fixed_layer1)
            embedding2 = self._run(self.layers2, embedding2, attention_mask2, start2, end2, self.fixed_layer2)
            if count == 0 and self.in_batch_pairs:
                embedding1, embedding2, attention_mask1, attention_mask2, co_attention_mask = _pair_up(
                    embedding1, embedding2, attention_mask1, attention_mask2, co_attention_mask)
            if count == 0 and self.FAST_MODE:  # one stream-1 example against a batch of stream-2 ones
                embedding1 = embedding1.expand(embedding2.size(0), *embedding1.shape[1:])
                attention_mask1 = attention_mask1.expand(embedding2.size(0), *attention_mask1.shape[1:])
            if self.with_coattention:
                embedding1, embedding2 = self.c_layer[count](embedding1, attention_mask1, embedding2,
                                                             attention_mask2, co_attention_mask)
            start1, start2 = end1, end2
            if output_all_encoded_layers:
                encoded1.append(embedding1)
                encoded2.append(embedding2)
        embedding2 = self._run(self.layers2, embedding2, attention_mask2, start2, len(self.layers2), 0)
        embedding1 = self._run(self.layers1, embedding1, attention_mask1, start1, len(self.layers1), 0)
        if not output_all_encoded_layers:
            encoded1.append(embedding1)
            encoded2.append(embedding2)
        return torch.stack(encoded1, dim=-1), torch.stack(encoded2, dim=-1)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "BiModalEncoder":
        return cls(**{"num_hidden_layers1": config.num_hidden_layers, "hidden_size1": config.hidden_size,
                      "num_attention_heads1": config.num_attention_heads,
                      "attention_dropout1": config.attention_probs_dropout_prob,
                      "hidden_dropout1": config.hidden_dropout_prob, "intermediate_size1": config.intermediate_size,
                      "activation": config.hidden_act, **kwargs})
