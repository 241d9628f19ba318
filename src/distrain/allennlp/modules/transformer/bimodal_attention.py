"""``BiModalAttention``: ViLBERT's co-attention, each of two streams attending over the other's keys and values.

Following ViLBERT (Lu et al., 2019), the queries of one modality (say, language) score the keys of the other
(image regions), so each stream comes out as features pooled from the other stream, conditioned on its own.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule
from distrain.allennlp.modules.transformer.util import apply_mask, attend, split_heads
from distrain.allennlp.modules.matrix_attention import MatrixAttention  # with every kind registered


class BiModalAttention(TransformerModule, FromParams):
    """Both directions of co-attention: stream 1's values weighted by stream 2's queries against stream 1's keys
    (the first output), and the mirror image (the second). Both are ``combined_hidden_size`` wide."""

    def __init__(self, hidden_size1: int, hidden_size2: int, combined_hidden_size: int, num_attention_heads: int,
                 dropout1: float = 0.0, dropout2: float = 0.0, scoring_func1: str = "scaled_dot_product",
                 scoring_func2: str = "scaled_dot_product"):
        super().__init__()
        if combined_hidden_size % num_attention_heads != 0:
            raise ValueError(f"The hidden size ({combined_hidden_size}) is not a multiple of the number of "
                             f"attention heads ({num_attention_heads})")
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = combined_hidden_size // num_attention_heads
        self.all_head_size = num_attention_heads * self.attention_head_size
        # registered in AllenNLP's order (query1, key1, value1, ..., query2, ...), so a seed gives its weights
        for stream, width, scoring, dropout in ((1, hidden_size1, scoring_func1, dropout1),
                                                (2, hidden_size2, scoring_func2, dropout2)):
            for role in ("query", "key", "value"):
                setattr(self, f"{role}{stream}", torch.nn.Linear(width, self.all_head_size))
            setattr(self, f"scoring_func{stream}", scoring)
            setattr(self, f"attn{stream}", MatrixAttention.by_name(scoring)())
            setattr(self, f"dropout{stream}", torch.nn.Dropout(dropout))

    def _projections(self, stream: int, states: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        return tuple(split_heads(getattr(self, f"{role}{stream}")(states), self.num_attention_heads,
                                 self.attention_head_size) for role in ("query", "key", "value"))

    def _pooled(self, stream: int, queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                mask: Optional[torch.Tensor], co_mask: Optional[torch.Tensor]) -> torch.Tensor:
        scores = getattr(self, f"attn{stream}")(queries, keys)
        for given in (mask, co_mask):
            if given is not None:
                scores = apply_mask(scores, given)
        return attend(getattr(self, f"dropout{stream}")(torch.softmax(scores, dim=-1)), values)

    def forward(self, input_tensor1: torch.Tensor, input_tensor2: torch.Tensor,
                attention_mask1: Optional[torch.Tensor] = None, attention_mask2: Optional[torch.Tensor] = None,
                co_attention_mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        """``input_tensor1`` ``(batch, length1, hidden1)`` and ``input_tensor2`` ``(batch, length2, hidden2)``,
        each with its mask; ``co_attention_mask`` ``(batch, heads, length1, length2)`` limits which pairs of the
        two streams may attend to each other (known word-region alignments, say)."""
        query1, key1, value1 = self._projections(1, input_tensor1)
        query2, key2, value2 = self._projections(2, input_tensor2)
        co_mask1 = None if co_attention_mask is None else co_attention_mask.permute(0, 1, 3, 2)
        pooled1 = self._pooled(1, query2, key1, value1, attention_mask1, co_mask1)
        pooled2 = self._pooled(2, query1, key2, value2, attention_mask2, co_attention_mask)
        return pooled1, pooled2
