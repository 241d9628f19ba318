"""AllenNLP's ``exponential`` moving average: ``shadow = decay × shadow + (1 - decay) × parameter`` after each step,
the decay ``min(decay, (numerator + n) / (denominator + n))`` at step ``n`` (TensorFlow's warm-up: early steps,
when the shadows still hold the initial values, weigh the new parameters more)."""

from __future__ import annotations

from typing import Iterable

import torch

from distrain.config.constraints import PositiveFloat, Probability
from distrain.training.moving_average import MovingAverage


@MovingAverage.register("exponential")
class ExponentialMovingAverage(MovingAverage):
    """``decay`` is the rate once warmed up; ``numerator`` and ``denominator`` shape the warm-up."""

    def __init__(self, parameters: Iterable[tuple[str, torch.nn.Parameter]], decay: Probability = 0.9999,
                 numerator: PositiveFloat = 1.0, denominator: PositiveFloat = 10.0) -> None:
        super().__init__(parameters)
        self.decay, self.numerator, self.denominator = decay, numerator, denominator

    def apply(self, num_updates: int) -> None:
        decay = min(self.decay, (self.numerator + num_updates) / (self.denominator + num_updates))
        with torch.no_grad():
            for name, parameter in self.parameters:
                self.shadows[name].mul_(decay).add_((1 - decay) * parameter.detach())
