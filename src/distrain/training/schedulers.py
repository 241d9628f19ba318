"""Learning-rate schedulers, stepped once per optimizer step (``step_epoch`` once per epoch)."""

from __future__ import annotations

import torch

from distrain.registry import Registrable


class LearningRateScheduler(Registrable):
    """``num_training_steps`` is supplied by the trainer (epochs × optimizer steps per epoch)."""

    runtime_args = ("optimizer", "num_training_steps")
    default_implementation = "constant"

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int) -> None:
        self.optimizer = optimizer
        self.num_training_steps = num_training_steps
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.steps = 0
        self._apply()

    def factor(self, step: int) -> float:
        """The multiplier on the base learning rate after ``step`` optimizer steps."""
        return 1.0

    def step(self) -> None:
        self.steps += 1
        self._apply()

    def step_epoch(self, metric: float | None = None) -> None:
        """Called after validation each epoch (for schedules that react to a metric)."""

    def _apply(self) -> None:
        scale = self.factor(self.steps)
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * scale

    def state_dict(self) -> dict:
        return {"steps": self.steps, "base_lrs": self.base_lrs}

    def load_state_dict(self, state: dict) -> None:
        self.steps = state["steps"]
        self.base_lrs = state["base_lrs"]
        self._apply()


@LearningRateScheduler.register("constant")
class ConstantScheduler(LearningRateScheduler):
    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, warmup_steps: int = 0) -> None:
        self.warmup_steps = warmup_steps
        super().__init__(optimizer, num_training_steps)

    def factor(self, step: int) -> float:
        return min(1.0, (step + 1) / self.warmup_steps) if self.warmup_steps else 1.0


@LearningRateScheduler.register("linear_with_warmup")
class LinearWithWarmup(LearningRateScheduler):
    """Linear rise over ``warmup_steps``, then linear decay to zero at the last step."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, warmup_steps: int = 0) -> None:
        self.warmup_steps = warmup_steps
        super().__init__(optimizer, num_training_steps)

    def factor(self, step: int) -> float:
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        remaining = self.num_training_steps - step
        return max(0.0, remaining / max(1, self.num_training_steps - self.warmup_steps))
