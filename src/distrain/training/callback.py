"""Callbacks: hooks the trainer calls on every worker. Writers check ``trainer.world.is_primary``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from distrain.distributed.world import World
from distrain.registry import Registrable


class TrainerView(Protocol):
    """What a callback sees of the running trainer (the trainer imports this module, not the reverse)."""

    world: World
    serialization_dir: Path
    #: the model being trained (not its parallel wrapper)
    model: Any
    #: how far into the current epoch training is (its ``epoch``, ``batches`` and this worker's ``loss_sum``,
    #: ``loss_weight`` and ``samples``; a new object each epoch)
    position: Any
    train_loader: Any
    #: optimizer steps taken so far
    step: int
    optimizer: Any
    callbacks: list[Callback]
    #: the early-stopping tracker (its best epoch and patience)
    tracker: Any
    #: the summary of the last finished epoch
    last_metrics: dict[str, Any]
    #: set by a callback's ``on_epoch`` to end training after this epoch
    stop_reason: str | None
    #: set by a callback (``on_start``, ``on_epoch``) to skip or run the coming epoch's validation
    validate_this_epoch: bool


class Callback(Registrable):
    def on_start(self, trainer: TrainerView) -> None:
        pass

    def backward_loss(self, trainer: TrainerView, outputs: dict[str, Any], scaled: Any, scale: Any) -> Any:
        """The tensor this micro-batch backpropagates: ``scaled``, the loss times ``scale`` (this worker's share
        of the step), unless a callback replaces or augments it (a later callback gets what an earlier returned).
        ``outputs`` are the model's for the micro-batch; gradients a callback computes of its own here (with
        ``retain_graph=True``) are scaled by ``scale`` to be this worker's share too."""
        return scaled

    def on_averaged_gradients(self, trainer: TrainerView, step: int) -> None:
        """Before optimizer step ``step``, its gradients averaged over the workers but not yet clipped: a callback
        may change them (one holding gradients of its own averages those too, with the same collective on every
        worker)."""

    def on_gradients(self, trainer: TrainerView, step: int) -> None:
        """Before optimizer step ``step`` (counted from 1), with its gradients averaged and clipped."""

    def on_step(self, trainer: TrainerView, step: int, loss: float | None) -> None:
        """After each optimizer step. ``loss`` is this worker's recent mean, only when it was read."""

    def on_epoch(self, trainer: TrainerView, epoch: int, metrics: dict[str, Any]) -> None:
        """After each epoch's validation, with the reduced metrics (identical on every worker)."""

    def on_end(self, trainer: TrainerView, metrics: dict[str, Any]) -> None:
        pass

    def on_failure(self, trainer: TrainerView, error: BaseException) -> None:
        """Training raised ``error`` (a stop signal raises :class:`~distrain.job.stop.Preempted`)."""

    def on_archive(self, trainer: TrainerView, archive: Path) -> None:
        """Rank 0 wrote the run's archive (after :meth:`on_end`)."""

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass
