"""Probes for the sync-mode and balancing tests: a strategy that does not replicate the model on
every worker (as a sharded one would not), and a classifier whose forward takes a set time per sample."""

from __future__ import annotations

import time

import torch

from distrain.models.feedforward_classifier import FeedForwardClassifier
from distrain.models.model import Model
from distrain.distributed.strategy import ParallelStrategy


@ParallelStrategy.register("test_not_replicated")
class NotReplicated(ParallelStrategy):
    """Declares that workers do not each hold the whole model (the base class's default)."""


class SimulatedClock:
    """Seconds that pass only when a forward says so: the balancer's clock in ``simulated_time`` runs, so the
    speeds it measures are exactly the ones the test set, however busy the machine is."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds


@Model.register("test_slow_classifier")
class SlowClassifier(FeedForwardClassifier):
    """A feed-forward classifier whose training forward takes ``seconds_per_sample`` per sample;
    rank ``slow_rank`` takes ``slowdown`` times as long from its ``slow_after``-th forward on. It sleeps, or with
    ``simulated_time`` it advances the balancer's clock by that much (and sleeps not at all)."""

    def __init__(self, seconds_per_sample: float = 0.001, slow_rank: int = 1, slowdown: float = 1.0,
                 slow_after: int = 0, simulated_time: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seconds_per_sample = seconds_per_sample
        self.slow_rank = slow_rank
        self.slowdown = slowdown
        self.slow_after = slow_after
        self.forwards = 0
        self.clock = None
        if simulated_time:
            from distrain.distributed.auto_shares import AutomaticShares

            self.clock = AutomaticShares.clock = SimulatedClock()

    def forward(self, features: torch.Tensor, label: torch.Tensor | None = None, **kwargs):
        if self.training:
            self.forwards += 1
            rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
            slow = rank == self.slow_rank and self.forwards > self.slow_after
            seconds = features.shape[0] * self.seconds_per_sample * (self.slowdown if slow else 1.0)
            if self.clock is not None:
                self.clock.seconds += seconds
            else:
                time.sleep(seconds)
        return super().forward(features, label, **kwargs)
