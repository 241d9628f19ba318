"""The entropy of a model's predicted distributions, averaged per batch and then over batches (AllenNLP's)."""

from __future__ import annotations

import torch

from distrain.metrics.metric import Metric


class Entropy(Metric):
    """``logits`` ``[..., C]`` (unnormalised log-probabilities), ``mask`` ``[...]``: each call adds the mean
    entropy of its unmasked distributions; the value is the mean over calls, ``{"entropy": value}``.

    A mean of per-batch means depends on how the data is batched and sharded, so it is not registered for configs
    (no config of distrain's can name it); models build it directly, as AllenNLP's do."""

    summed = ("entropy", "batches")

    def __call__(self, logits: torch.Tensor, mask: torch.Tensor | None = None) -> None:  # type: ignore[override]
        logits = logits.detach()
        if mask is None:
            mask = torch.ones(logits.shape[:-1], dtype=torch.bool, device=logits.device)
        mask = mask.detach().bool()
        log_probs = torch.log_softmax(logits.double(), dim=-1)
        entropy = -(log_probs.exp() * log_probs).sum(-1)
        if not mask.any():
            return  # an empty batch is no batch
        self.accumulate(entropy=entropy.masked_fill(~mask, 0.0).sum() / mask.sum(), batches=1)

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        batches = float(stats.get("batches", 0.0))
        return {"entropy": float(stats.get("entropy", 0.0)) / batches if batches > 0 else 0.0}
