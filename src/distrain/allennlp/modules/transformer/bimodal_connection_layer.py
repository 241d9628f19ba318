"""ViLBERT's connection layer: co-attention between two streams, then each stream's own residual and
feed-forward blocks."""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.activation_layer import ActivationLayer
from distrain.allennlp.modules.transformer.bimodal_attention import BiModalAttention
from distrain.allennlp.modules.transformer.output_layer import OutputLayer
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule


class BiModalOutput(TransformerModule, FromParams):
    """Each stream's residual block after co-attention (``combined_hidden_size`` back to the stream's width)."""

    def __init__(self, hidden_size1: int, hidden_size2: int, combined_hidden_size: int, dropout1: float,
                 dropout2: float):
        super().__init__()
        self.bert_output1 = OutputLayer(combined_hidden_size, hidden_size1, dropout1)
        self.bert_output2 = OutputLayer(combined_hidden_size, hidden_size2, dropout2)

    def forward(self, hidden_states1: torch.Tensor, input_tensor1: torch.Tensor, hidden_states2: torch.Tensor,
                input_tensor2: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.bert_output1(hidden_states1, input_tensor1), self.bert_output2(hidden_states2, input_tensor2)


class BiModalConnectionLayer(TransformerModule, FromParams):
    """Co-attention, the residual blocks, then per stream ``output(intermediate(x), x)``."""

    _pretrained_mapping = {"biAttention": "bimodal_attention", "biOutput": "bimodal_output"}

    def __init__(self, hidden_size1: int, hidden_size2: int, combined_hidden_size: int, intermediate_size1: int,
                 intermediate_size2: int, num_attention_heads: int, dropout1: float, dropout2: float,
                 activation: str):
        super().__init__()
        self.bimodal_attention = BiModalAttention(hidden_size1=hidden_size1, hidden_size2=hidden_size2,
                                                  combined_hidden_size=combined_hidden_size,
                                                  num_attention_heads=num_attention_heads, dropout1=dropout1,
                                                  dropout2=dropout2)
        self.bimodal_output = BiModalOutput(hidden_size1, hidden_size2, combined_hidden_size, dropout1, dropout2)
        for stream, width, inner, dropout in ((1, hidden_size1, intermediate_size1, dropout1),
                                              (2, hidden_size2, intermediate_size2, dropout2)):
            setattr(self, f"intermediate{stream}", ActivationLayer(width, inner, activation))
            setattr(self, f"output{stream}", OutputLayer(input_size=inner, hidden_size=width, dropout=dropout))

    def forward(self, input_tensor1: torch.Tensor, attention_mask1: Optional[torch.Tensor],
                input_tensor2: torch.Tensor, attention_mask2: Optional[torch.Tensor],
                co_attention_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        pooled1, pooled2 = self.bimodal_attention(input_tensor1, input_tensor2, attention_mask1, attention_mask2,
                                                  co_attention_mask)
        # stream 1 is updated with what it pooled from stream 2 (the second output), and the other way round
        attended1, attended2 = self.bimodal_output(pooled2, input_tensor1, pooled1, input_tensor2)
        return (self.output1(self.intermediate1(attended1), attended1),
                self.output2(self.intermediate2(attended2), attended2))
