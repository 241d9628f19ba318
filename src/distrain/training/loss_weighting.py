"""Exact gradients for losses that are means over a varying count (e.g. masked tokens per batch).

A masked-LM loss is a mean over the masked tokens of a batch, and each worker's slice holds a
different number of them. Averaging the workers' means would weight tokens unequally, so a model
returns the count as ``"loss_weight"`` and the trainer backwards ``world × loss × weight / N`` (N: the
step's sample count, known to every worker, which keeps the magnitude near the usual one). DDP
averages the gradients, giving ``Σ loss_i × weight_i / N``; before clipping, :meth:`normalise`
multiplies the gradients by ``N / W``, where ``W`` is the step's total weight over all workers (it
travels in the step's one agreement collective, see :func:`distrain.job.stop.agree`):
the gradient of the global token-weighted mean, on any number of workers. When a step is a single
micro-batch, ``W`` is known before its backward and :meth:`settle` scales the loss by ``N / W`` instead,
which spares that pass over every gradient.
"""

from __future__ import annotations

from typing import Iterable

import torch



class StepWeights:
    """The weight this worker contributed to the current optimizer step, and the step's samples."""

    def __init__(self) -> None:
        self.weight = torch.zeros((), dtype=torch.float64)
        self.samples = 0
        self.active = False
        #: the step's loss was scaled by N / W already (see :meth:`settle`)
        self.settled = False

    def add(self, loss_weight: torch.Tensor | float, batch_size: int, step_samples: int) -> torch.Tensor:
        """Record a micro-batch's weight (zero for a placeholder batch); return it as a float64 on
        the weight's own device (no host synchronisation)."""
        weight = torch.as_tensor(loss_weight).detach().to(torch.float64)
        if not batch_size:
            weight = torch.zeros_like(weight)
        self.weight = self.weight.to(weight.device) + weight
        self.samples = step_samples
        self.active = True
        return weight

    def settle(self, scaled: torch.Tensor, total: torch.Tensor) -> torch.Tensor:
        """``scaled`` (the step's only micro-batch's loss, scaled for backward) times ``N / W``, ``total``
        being ``W`` on the device: its gradients come out as the weighted mean's, and :meth:`normalise`
        has nothing left to do."""
        self.settled = True
        factor = torch.where(total > 0, self.samples / total.clamp(min=1e-300), torch.zeros_like(total))
        return scaled * factor.to(scaled.dtype)

    def discard(self) -> None:
        """Forget the current step's weights (the step was skipped)."""
        self.weight = torch.zeros((), dtype=torch.float64)
        self.active = False
        self.settled = False

    def normalise(self, parameters: Iterable[torch.nn.Parameter], total: float) -> None:
        """Rescale gradients from ``Σ loss × weight / N`` to the weighted mean, ``total`` being the
        step's weight summed over all workers; no-op for plain losses."""
        if not self.active:
            return
        self.weight = torch.zeros((), dtype=torch.float64)
        self.active = False
        if self.settled:
            self.settled = False
            return
        grads = [param.grad for param in parameters if param.grad is not None]
        factor = self.samples / total if total > 0 else 0.0
        plain = [grad for grad in grads if type(grad) is torch.Tensor]
        if plain:
            torch._foreach_mul_(plain, factor)
        for grad in grads:  # parts of split layers (DTensors, tensor parallelism)
            if type(grad) is not torch.Tensor:
                grad.mul_(factor)
