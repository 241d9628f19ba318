"""AllenNLP's ``slanted_triangular``, ``polynomial_decay``, ``linear_with_warmup`` and ``multi_step``, with
AllenNLP's formulas, so its configs keep their learning rates.

AllenNLP sets the rate of optimizer step ``n`` (1-based) from ``n`` (``step_batch(n)`` just before the
step); distrain's schedules give the rate of step ``s + 1`` after ``s`` steps, so both read ``n = s + 1``.
"""

from __future__ import annotations

import bisect
import logging
from typing import Annotated, Any, ClassVar, Mapping

import torch
from annotated_types import Ge

from distrain.config.constraints import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.optim.schedulers import LearningRateScheduler

logger = logging.getLogger(__name__)


@LearningRateScheduler.register("slanted_triangular")
class SlantedTriangular(LearningRateScheduler):
    """ULMFiT's schedule: the rate rises linearly for ``cut_frac`` of the steps from ``base / ratio``
    to ``base``, then falls linearly back. ``num_epochs`` and ``num_steps_per_epoch`` default to the
    trainer's; as in AllenNLP, once an epoch has ended its real step count replaces the estimate.
    ``discriminative_fine_tuning`` divides each earlier parameter group's rate by ``decay_factor`` once
    more. ``gradual_unfreezing`` (changing what trains between epochs) is not supported."""

    runtime_args: ClassVar[tuple[str, ...]] = ("optimizer", "num_training_steps", "trainer_epochs",
                                               "trainer_steps_per_epoch")
    wants_epoch_shape: ClassVar[bool] = True

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, trainer_epochs: int = 1,
                 trainer_steps_per_epoch: int | None = None, num_epochs: PositiveInt | None = None,
                 num_steps_per_epoch: PositiveInt | None = None, cut_frac: Probability = 0.1,
                 ratio: PositiveFloat = 32, gradual_unfreezing: bool = False,
                 discriminative_fine_tuning: bool = False, decay_factor: PositiveFloat = 0.38) -> None:
        self.num_epochs = num_epochs or trainer_epochs
        self.num_steps_per_epoch = num_steps_per_epoch or trainer_steps_per_epoch or num_training_steps
        self.cut_frac = cut_frac
        self.ratio = ratio
        #: optimizer steps taken when each epoch ended (AllenNLP's ``batch_num_total_epoch_end``)
        self.epoch_ends = [0]
        super().__init__(optimizer, num_training_steps)
        if discriminative_fine_tuning:
            self.base_lrs = [base * decay_factor ** (len(self.base_lrs) - 1 - index)
                             for index, base in enumerate(self.base_lrs)]
            self._apply()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        if arguments["gradual_unfreezing"]:
            return [Problem("gradual_unfreezing", "is not supported (it changes which parameters train between "
                                                  "epochs); remove it")]
        return []

    def rates(self, step: int) -> list[float]:
        """The rate of each parameter group for optimizer step ``step + 1``."""
        taken = step + 1
        if len(self.epoch_ends) > 1:
            per_epoch = int(self.epoch_ends[-1] / (len(self.epoch_ends) - 1))
        else:
            per_epoch = max(self.num_steps_per_epoch, taken)
        num_steps = self.num_epochs * per_epoch
        position = min(taken, num_steps)
        cut = int(num_steps * self.cut_frac)
        if position < cut:
            proportion = position / cut
        else:
            proportion = 1 - (position - cut) / max(num_steps - cut, 1)
        return [base * (1 + proportion * (self.ratio - 1)) / self.ratio for base in self.base_lrs]

    def _apply(self) -> None:
        for group, rate in zip(self.optimizer.param_groups, self.rates(self.steps)):
            group["lr"] = rate

    def step_epoch(self, metric: float | None = None) -> None:
        self.epoch_ends.append(self.steps)
        self._apply()  # the next step's rate from the epoch's real length

    def state_dict(self) -> dict:
        return {**super().state_dict(), "epoch_ends": list(self.epoch_ends)}

    def load_state_dict(self, state: dict) -> None:
        self.epoch_ends = list(state["epoch_ends"])
        super().load_state_dict(state)


@LearningRateScheduler.register("polynomial_decay")
class PolynomialDecay(LearningRateScheduler):
    """AllenNLP's polynomial decay: ``n / warmup_steps`` × base while ``n < warmup_steps``, then
    ``(base - end) × ((total - n) / (total - warmup_steps)) ** power + end`` down to
    ``end_learning_rate`` (a rate, not a factor), ``n`` being the step's 1-based number."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, warmup_steps: NonNegativeInt = 0,
                 total_steps: PositiveInt | None = None, power: PositiveFloat = 1.0,
                 end_learning_rate: NonNegativeFloat = 0.0) -> None:
        self.power = power
        self.end_learning_rate = end_learning_rate
        super().__init__(optimizer, num_training_steps, warmup_steps, total_steps)

    def rates(self, step: int) -> list[float]:
        taken, total = step + 1, self.num_training_steps
        if self.warmup_steps > 0 and taken < self.warmup_steps:
            return [base * taken / self.warmup_steps for base in self.base_lrs]
        if taken >= total:
            return [self.end_learning_rate for _ in self.base_lrs]
        fraction = ((total - taken) / (total - self.warmup_steps)) ** self.power
        return [fraction * (base - self.end_learning_rate) + self.end_learning_rate for base in self.base_lrs]

    def _apply(self) -> None:
        for group, rate in zip(self.optimizer.param_groups, self.rates(self.steps)):
            group["lr"] = rate


@LearningRateScheduler.register("linear_with_warmup")
class LinearWithWarmup(PolynomialDecay):
    """AllenNLP's ``linear_with_warmup``: ``polynomial_decay`` with ``power`` 1 and ``end_learning_rate`` 0,
    100 warmup steps unless told (distrain's own ``linear`` warms up for 0 and decays one step later)."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int,
                 warmup_steps: NonNegativeInt = 100, total_steps: PositiveInt | None = None) -> None:
        super().__init__(optimizer, num_training_steps, warmup_steps, total_steps, power=1.0, end_learning_rate=0.0)


@LearningRateScheduler.register("multi_step")
class MultiStep(LearningRateScheduler):
    """AllenNLP's ``multi_step`` (torch's ``MultiStepLR``): the rate is multiplied by ``gamma`` at the end of
    each epoch named in ``milestones`` (counting from 1; a milestone listed twice multiplies twice). It
    steps per epoch, as AllenNLP's trainer steps it; ``last_epoch`` is the last epoch already done
    (-1: none)."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, milestones: list[PositiveInt],
                 gamma: PositiveFloat = 0.1, last_epoch: Annotated[int, Ge(-1)] = -1) -> None:
        self.milestones, self.gamma = sorted(milestones), gamma
        self.epochs = last_epoch + 1
        super().__init__(optimizer, num_training_steps)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return []

    def factor(self, step: int) -> float:
        return self.gamma ** bisect.bisect_right(self.milestones, self.epochs)

    def step_epoch(self, metric: float | None = None) -> None:
        self.epochs += 1
        self._apply()

    def state_dict(self) -> dict:
        return {**super().state_dict(), "epochs": self.epochs}

    def load_state_dict(self, state: dict) -> None:
        self.epochs = state["epochs"]
        super().load_state_dict(state)


@LearningRateScheduler.register("noam")
class Noam(LearningRateScheduler):
    """AllenNLP's ``noam`` (the Transformer paper's): ``factor × model_size ** -0.5 × min(n ** -0.5,
    n × warmup_steps ** -1.5)`` for step ``n`` (1-based): a linear rise for ``warmup_steps``, then ``1/sqrt(n)``.
    The optimizer's own ``lr`` is not used, as in AllenNLP."""

    def __init__(self, optimizer: torch.optim.Optimizer, num_training_steps: int, model_size: PositiveInt,
                 warmup_steps: PositiveInt, factor: PositiveFloat = 1.0, last_epoch: Annotated[int, Ge(-1)] = -1) -> None:
        self.model_size = model_size
        self.scale = factor  # not ``factor``: the base class's method of that name
        super().__init__(optimizer, num_training_steps, warmup_steps)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return []  # no total_steps to compare warmup_steps with

    def rates(self, step: int) -> list[float]:
        taken = max(step + 1, 1)
        scale = self.scale * self.model_size ** -0.5 * min(taken ** -0.5, taken * self.warmup_steps ** -1.5)
        return [scale for _ in self.base_lrs]

    def _apply(self) -> None:
        for group, rate in zip(self.optimizer.param_groups, self.rates(self.steps)):
            group["lr"] = rate
