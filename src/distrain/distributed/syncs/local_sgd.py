"""Local SGD: each worker steps on its own slice; parameters are averaged every ``sync_every`` steps.

Between averages no gradient is all-reduced: a worker's gradient is the mean over its own samples
(``apply_ddp`` leaves the model unwrapped). The average weights each worker by the samples (or loss
weight) it trained on since the last one, so uneven shares (``device_weights``) count each sample
once, unlike an equal-weight average. Averages happen when the global step count is a multiple of
``sync_every`` and at the end of every epoch (so validation and checkpoints at an epoch's end see one
model). Each worker's optimizer state stays its own (as in accelerate's ``LocalSGD``); with plain SGD
and momentum, ``sync_every: 1`` makes the synchronous updates.
"""

from __future__ import annotations

from typing import Annotated, Any, Iterable

import torch
from annotated_types import Ge

from distrain.distributed.sync import SyncMode
from distrain.distributed.world import SINGLE, World


@SyncMode.register("local_sgd")
class LocalSGD(SyncMode):
    """Each worker steps on its own slice; parameters are averaged (sample-weighted) every ``sync_every`` steps."""

    averages_gradients = False
    has_rank_state = True

    def __init__(self, world: World = SINGLE, sync_every: Annotated[int, Ge(1)] = 8) -> None:
        super().__init__(world)
        self.sync_every = sync_every
        self.steps_since_sync = 0
        self.weight = torch.zeros((), dtype=torch.float64)

    def before_step(self, parameters: Iterable[torch.nn.Parameter], local_weight: Any, total_weight: Any) -> None:
        """The trainer scaled this worker's loss for a gradient average over ``dp_size`` workers; undo
        that, so the gradient is the mean over this worker's own samples."""
        if not self.world.is_distributed:
            return
        local = torch.as_tensor(local_weight, dtype=torch.float64)
        self.weight = self.weight + local
        factor = torch.as_tensor(total_weight, dtype=torch.float64) / (self.world.dp_size * local).clamp(min=1e-30)
        grads = [p.grad for p in parameters if p.grad is not None]
        if grads:
            torch._foreach_mul_(grads, float(factor))

    def after_step(self, step: int, local_weight: Any) -> None:
        self.steps_since_sync += 1
        if step % self.sync_every == 0:
            self.synchronise()

    def end_epoch(self) -> None:
        if self.steps_since_sync:
            self.synchronise()

    def synchronise(self) -> None:
        """Replace every worker's parameters (and floating buffers) by their sample-weighted average."""
        self.steps_since_sync = 0
        if not self.world.is_distributed:
            return
        import torch.distributed as dist

        tensors = self.averaged_tensors()
        weight = self.weight.to(torch.float32)
        flat = torch.cat([t.detach().reshape(-1).to(torch.float32) * weight for t in tensors] + [weight.reshape(1)])
        dist.all_reduce(flat)
        total = flat[-1]
        offset = 0
        with torch.no_grad():
            for tensor in tensors:
                size = tensor.numel()
                tensor.copy_((flat[offset : offset + size] / total).reshape(tensor.shape))
                offset += size
        self.weight = torch.zeros((), dtype=torch.float64)
        self.count(flat.numel() * flat.element_size())
        self.after_average()

    def after_average(self) -> None:
        """Hook for modes that do more with the average (DiLoCo's outer step)."""

    def averaged_tensors(self) -> list[torch.Tensor]:
        assert self.model is not None, "attach() the model first"
        return [p.data for p in self.model.parameters()] + [
            b for b in self.model.buffers() if b.is_floating_point()
        ]

    # ------------------------------------------------------------------------ checkpointed state
    def state_dict(self) -> dict[str, Any]:
        return super().state_dict() | {"steps_since_sync": self.steps_since_sync}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.steps_since_sync = int(state["steps_since_sync"])

    def rank_state_dict(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """Between averages each worker's parameters, optimizer state and weight are its own."""
        assert self.model is not None
        return {
            "model": {name: value.detach().clone() for name, value in self.model.state_dict().items()},
            "optimizer": optimizer.state_dict(),
            "weight": self.weight.clone(),
        }

    def load_rank_state_dict(self, optimizer: torch.optim.Optimizer, state: dict[str, Any] | None) -> None:
        if state is None:
            return
        assert self.model is not None
        self.model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        self.weight = state["weight"].clone()
