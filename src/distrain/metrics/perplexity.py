"""exp(mean negative log-likelihood per token): how many choices the model is torn between."""

from __future__ import annotations

import math

import torch

from distrain.metrics.classes import check_gold_range, flat_weights
from distrain.metrics.metric import Metric


@Metric.register("perplexity")
class Perplexity(Metric):
    """exp(mean token negative log-likelihood), over all tokens of all workers.

    ``predictions``: logits ``[..., V]``; ``gold_labels``: token ids ``[...]``; ``mask``: ``[...]``.

    Keeps the summed token log-likelihood and the token count, so the value is the perplexity of
    all tokens together, not a mean of per-batch (or per-worker) perplexities.
    """

    summed = ("nll", "tokens")

    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        vocab_size = predictions.size(-1)
        log_probs = torch.log_softmax(predictions.reshape(-1, vocab_size).double(), dim=-1)
        gold = gold_labels.reshape(-1).long()
        weights = flat_weights(gold_labels, mask)
        check_gold_range(self, gold, weights, vocab_size, "perplexity")
        nll = -log_probs.gather(1, gold.clamp(0, vocab_size - 1).unsqueeze(1)).squeeze(1)
        self.accumulate(nll=(nll * weights).sum(), tokens=weights.sum())

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        tokens = float(stats.get("tokens", 0.0))
        return math.exp(float(stats.get("nll", 0.0)) / tokens) if tokens > 0 else 0.0
