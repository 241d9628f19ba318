"""The step's one agreement between workers: a small asynchronous all-reduce of every worker's flags.

Once per optimizer step the trainer sums, over all workers, whether a loss was not finite, whether a stop
was asked (:mod:`distrain.job.stop`), whether it is time to save, and the step's loss weight,
so every worker skips, stops or saves after the same step, and nobody waits forever in a collective
that a stopped peer will never join.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from distrain.distributed.collectives import all_reduce_sum_async


@dataclass(frozen=True)
class StepDecision:
    nonfinite: bool
    stop: bool
    save: bool
    #: the step's ``loss_weight`` summed over all workers (0 when the model reports none)
    loss_weight: float = 0.0


class PendingAgreement:
    """A step's agreement in flight: :meth:`wait` returns what every worker decided."""

    def __init__(self, values: torch.Tensor, work=None) -> None:
        self.values = values
        self.work = work

    def wait(self) -> StepDecision:
        if self.work is not None:
            self.work.wait()
        nonfinite, stop, save, weight = self.values.tolist()  # the step's one host synchronisation
        return StepDecision(nonfinite > 0, stop > 0, save > 0, weight)

    def loss_weight(self) -> torch.Tensor:
        """The step's loss weight summed over all workers, as a tensor on the device: it waits for the
        collective (on a GPU, its stream does) but never for the host."""
        if self.work is not None:
            self.work.wait()
            self.work = None
        return self.values[3]


def agree(
    *, nonfinite: torch.Tensor | bool, stop: bool, save: bool, loss_weight: torch.Tensor | float = 0.0,
    distributed: bool = False,
) -> PendingAgreement:
    """Start the step's one collective: every worker's flags and loss weight, summed, so any worker's
    flag counts for all of them. The trainer starts it before the last backward of a step, so it
    travels while the gradients are being reduced; nothing waits for it until the optimizer step."""
    device = next((v.device for v in (nonfinite, loss_weight) if isinstance(v, torch.Tensor)), torch.device("cpu"))
    values = torch.stack([_on_device(value, device) for value in (nonfinite, stop, save, loss_weight)])
    if not distributed:
        return PendingAgreement(values)
    values, work = all_reduce_sum_async(values)
    return PendingAgreement(values, work)


def _on_device(value: torch.Tensor | bool | float, device: torch.device) -> torch.Tensor:
    """A float64 scalar on ``device``. A host value is filled in on the device (a kernel launch):
    copying it from host memory would be a host-device synchronisation on CUDA, once per value per step."""
    if isinstance(value, torch.Tensor) and value.device == device:
        return value.to(torch.float64).reshape(())
    return torch.full((), float(value), dtype=torch.float64, device=device)  # float() of a host value is free
