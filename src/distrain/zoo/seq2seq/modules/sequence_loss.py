"""The loss of a decoder trained by teacher forcing: step ``t``'s logits score target token ``t + 1``.

AllenNLP's ``sequence_cross_entropy_with_logits`` with its default averaging: each sequence's token-mean
negative log-likelihood, then the mean over sequences that have a token. Label smoothing puts
``ratio / classes`` on every class and the rest on the gold one, as AllenNLP's did (not torch's, which differs
by its normalisation of the gold share).
"""

from __future__ import annotations

import torch

TINY = 1e-13  # AllenNLP's tiny_value_of_dtype for float32


def sequence_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                           label_smoothing: float | None = None) -> torch.Tensor:
    """``logits (batch, steps, classes)`` against ``targets`` and ``mask`` ``(batch, steps)``."""
    weights = mask.to(logits.dtype)
    log_probabilities = torch.log_softmax(logits, dim=-1)
    gold = targets.long().unsqueeze(-1)
    if label_smoothing:
        classes = logits.shape[-1]
        share = label_smoothing / classes
        smoothed = torch.full_like(log_probabilities, share).scatter_(-1, gold, 1.0 - label_smoothing + share)
        losses = -(log_probabilities * smoothed).sum(-1)
    else:
        losses = -log_probabilities.gather(-1, gold).squeeze(-1)
    per_token = weights.sum(1)
    per_sequence = (losses * weights).sum(1) / (per_token + TINY)
    return per_sequence.sum() / ((per_token > 0).sum() + TINY)


def shifted_loss(logits: torch.Tensor, targets: torch.Tensor, target_mask: torch.Tensor,
                 label_smoothing: float | None = None) -> torch.Tensor:
    """The loss of ``logits`` computed from the inputs ``targets[:, :-1]`` (the start symbol first) against
    ``targets[:, 1:]``: the sequence ``<s> w1 w2 </s>`` trains three predictions, ``w1 w2 </s>``."""
    return sequence_cross_entropy(logits, targets[:, 1:], target_mask[:, 1:], label_smoothing)
