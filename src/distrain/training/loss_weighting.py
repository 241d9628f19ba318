"""Exact gradients for losses that are means over a varying count (e.g. masked tokens per batch).

A masked-LM loss is a mean over the masked tokens of a batch, and each worker's slice holds a
different number of them. Averaging the workers' means would weight tokens unequally, so a model
returns the count as ``"loss_weight"`` and the trainer backwards ``world × loss × weight / N`` (N: the
step's sample count, known to every worker, which keeps the magnitude near the usual one). DDP
averages the gradients, giving ``Σ loss_i × weight_i / N``; before clipping, :meth:`normalise`
all-reduces the step's total weight ``W`` (one collective per optimizer step) and multiplies the
gradients by ``N / W``: the gradient of the global token-weighted mean, on any number of workers.
"""

from __future__ import annotations

from typing import Iterable

import torch

from distrain.distributed.collectives import all_reduce_sum


class StepWeights:
    """The weight this worker contributed to the current optimizer step, and the step's samples."""

    def __init__(self) -> None:
        self.weight = torch.zeros((), dtype=torch.float64)
        self.samples = 0
        self.active = False

    def add(self, loss_weight: torch.Tensor | float, batch_size: int, step_samples: int) -> torch.Tensor:
        """Record a micro-batch's weight (zero for a placeholder batch); return it as a CPU float64."""
        if batch_size:
            weight = torch.as_tensor(loss_weight).detach().to("cpu", torch.float64)
        else:
            weight = torch.zeros((), dtype=torch.float64)
        self.weight += weight
        self.samples = step_samples
        self.active = True
        return weight

    def discard(self) -> None:
        """Forget the current step's weights (the step was skipped)."""
        self.weight.zero_()
        self.active = False

    def normalise(self, parameters: Iterable[torch.nn.Parameter]) -> None:
        """Rescale gradients from ``Σ loss × weight / N`` to the weighted mean; no-op for plain losses."""
        if not self.active:
            return
        total = float(all_reduce_sum(self.weight.clone()))
        self.weight.zero_()
        self.active = False
        grads = [param.grad for param in parameters if param.grad is not None]
        if grads:
            torch._foreach_mul_(grads, self.samples / total if total > 0 else 0.0)
