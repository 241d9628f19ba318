"""A language model's output layer and loss over the whole vocabulary (AllenNLP's ``SoftmaxLoss``): the summed
negative log-likelihood of the targets, which exclude the padding id (target ``t`` is vocabulary id ``t + 1``)."""

from __future__ import annotations

import math

import torch


class SoftmaxLoss(torch.nn.Module):
    """``softmax_w`` is ``(embedding_dim, num_words)``, AllenNLP's layout, so its weights load as they are."""

    def __init__(self, num_words: int, embedding_dim: int) -> None:
        super().__init__()
        self.softmax_w = torch.nn.Parameter(torch.randn(embedding_dim, num_words) / math.sqrt(embedding_dim))
        self.softmax_b = torch.nn.Parameter(torch.zeros(num_words))

    def forward(self, embeddings: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        log_probs = torch.log_softmax(embeddings @ self.softmax_w + self.softmax_b, dim=-1)
        return torch.nn.functional.nll_loss(log_probs, targets.long(), reduction="sum")
