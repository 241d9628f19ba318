"""Learning-rate schedules: stepped once per optimizer step (``step``), once per epoch (``step_epoch``).

Every schedule multiplies each parameter group's base learning rate by ``factor(s)``, where ``s`` is
the number of optimizer steps already taken, so ``factor(s)`` is the multiplier used by step ``s + 1``.
Warmup rises linearly, ``(s + 1) / warmup_steps`` for ``s < warmup_steps`` (the first step is not
wasted at zero); after it, ``p = (s - warmup_steps) / (total - warmup_steps)`` runs from 0 to 1 and
the decay shape gives the factor. ``total`` is ``total_steps`` when given, else the trainer's
epochs × optimizer steps per epoch.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Mapping

import torch

from distrain.config.constraints import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, ShrinkFactor
from distrain.config.errors import Problem
from distrain.registry import Registrable


class LearningRateScheduler(Registrable):
    """``num_training_steps`` is supplied by the trainer (epochs × optimizer steps per epoch)."""

    runtime_args = ("optimizer", "num_training_steps")
    default_implementation = "constant"

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        num_training_steps: int,
        warmup_steps: NonNegativeInt = 0,
        total_steps: PositiveInt | None = None,
    ) -> None:
        self.optimizer = optimizer
        self.num_training_steps = total_steps if total_steps is not None else num_training_steps
        self.warmup_steps = warmup_steps
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.steps = 0
        self._apply()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        total, warmup = arguments["total_steps"], arguments["warmup_steps"]
        if total is not None and warmup > total:
            return [Problem("warmup_steps", f"must be at most total_steps ({total}), got {warmup}")]
        return []

    def factor(self, step: int) -> float:
        """The multiplier on the base learning rate after ``step`` optimizer steps."""
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        span = max(1, self.num_training_steps - self.warmup_steps)
        return self.decay(min(1.0, (step - self.warmup_steps) / span))

    def decay(self, progress: float) -> float:
        """The multiplier after warmup, ``progress`` running from 0 to 1."""
        return 1.0

    def step(self) -> None:
        self.steps += 1
        self._apply()

    def step_epoch(self, metric: float | None = None) -> None:
        """Called after validation each epoch (for schedules that react to a metric)."""

    def get_lr(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

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
    """Warmup (optional), then the base learning rate."""


class _ToEndFactor(LearningRateScheduler):
    """A decay from the base rate down to ``end_factor`` × base, along a ``shape`` that runs from 1 to 0."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, warmup_steps: NonNegativeInt = 0,
                 total_steps: PositiveInt | None = None, end_factor: NonNegativeFloat = 0.0) -> None:
        self.end_factor = end_factor
        super().__init__(optimizer, num_training_steps, warmup_steps, total_steps)

    def decay(self, progress: float) -> float:
        return self.end_factor + (1.0 - self.end_factor) * self.shape(progress)

    def shape(self, progress: float) -> float:
        raise NotImplementedError


@LearningRateScheduler.register("linear")
class LinearDecay(_ToEndFactor):
    """Warmup, then linear decay from the base rate to ``end_factor`` × base at the last step."""

    def shape(self, progress: float) -> float:
        return 1.0 - progress


@LearningRateScheduler.register("cosine")
class CosineWithWarmup(_ToEndFactor):
    """Warmup, then half a cosine from the base rate down to ``end_factor`` × base."""

    def shape(self, progress: float) -> float:
        return 0.5 * (1.0 + math.cos(math.pi * progress))


@LearningRateScheduler.register("polynomial")
class PolynomialWithWarmup(_ToEndFactor):
    """Warmup, then ``(1 - progress) ** power`` from the base rate down to ``end_factor`` × base
    (``power`` 1 is linear decay; BERT and HetSeq use ``power`` 1.0)."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, warmup_steps: NonNegativeInt = 0,
                 total_steps: PositiveInt | None = None, power: PositiveFloat = 1.0, end_factor: NonNegativeFloat = 0.0) -> None:
        self.power = power
        super().__init__(optimizer, num_training_steps, warmup_steps, total_steps, end_factor)

    def shape(self, progress: float) -> float:
        return (1.0 - progress) ** self.power


@LearningRateScheduler.register("reduce_on_plateau")
class ReduceOnPlateau(LearningRateScheduler):
    """Warmup (optional), then multiply the rate by ``factor`` whenever the validation metric has
    not improved (by more than ``threshold``, relative) for more than ``patience`` epochs (as in
    ``torch.optim.lr_scheduler.ReduceLROnPlateau``); never below
    ``min_lr``. ``mode`` is ``"max"`` for metrics like accuracy, ``"min"`` for losses."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, warmup_steps: NonNegativeInt = 0,
                 total_steps: PositiveInt | None = None, mode: Literal["min", "max"] = "min", factor: ShrinkFactor = 0.1,
                 patience: NonNegativeInt = 2, threshold: NonNegativeFloat = 1e-4,
                 min_lr: NonNegativeFloat = 0.0) -> None:
        self.mode = mode
        self.reduction = factor
        self.patience = patience
        self.threshold = threshold
        self.min_lr = min_lr
        self.scale = 1.0
        self.best: float | None = None
        self.bad_epochs = 0
        super().__init__(optimizer, num_training_steps, warmup_steps, total_steps)

    def factor(self, step: int) -> float:
        warm = (step + 1) / self.warmup_steps if step < self.warmup_steps else 1.0
        return warm * self.scale

    def _apply(self) -> None:
        scale = self.factor(self.steps)
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = max(base * scale, min(self.min_lr, base)) if self.scale < 1.0 else base * scale

    def step_epoch(self, metric: float | None = None) -> None:
        if metric is None:
            return
        if self.best is None or self._improved(metric):
            self.best, self.bad_epochs = metric, 0
            return
        self.bad_epochs += 1
        if self.bad_epochs > self.patience:
            self.scale *= self.reduction
            self.bad_epochs = 0
            self._apply()

    def _improved(self, metric: float) -> bool:
        margin = abs(self.best) * self.threshold
        return metric < self.best - margin if self.mode == "min" else metric > self.best + margin

    def state_dict(self) -> dict:
        return {**super().state_dict(), "scale": self.scale, "best": self.best, "bad_epochs": self.bad_epochs}

    def load_state_dict(self, state: dict) -> None:
        self.scale, self.best, self.bad_epochs = state["scale"], state["best"], state["bad_epochs"]
        super().load_state_dict(state)
