"""Write epoch metrics (and the training loss every ``log_every`` steps) for TensorBoard."""

from __future__ import annotations

from typing import Any

from distrain.config.constraints import PositiveInt
from distrain.training.callback import Callback
from distrain.training.callbacks.optional_package import import_for


@Callback.register("tensorboard")
class TensorBoardCallback(Callback):
    """Writes epoch metrics, and the training loss every ``log_every`` steps, for TensorBoard."""

    def __init__(self, log_every: PositiveInt = 10) -> None:
        self.log_every = log_every
        self.writer = None

    def on_start(self, trainer) -> None:
        if not trainer.world.is_primary:
            return
        tensorboard = import_for("tensorboard", "torch.utils.tensorboard", "the tensorboard package", "tensorboard")
        self.writer = tensorboard.SummaryWriter(str(trainer.serialization_dir / "tensorboard"))

    def on_step(self, trainer, step: int, loss: float | None) -> None:
        if self.writer is not None and loss is not None and step % self.log_every == 0:
            self.writer.add_scalar("train/loss", loss, step)

    def on_epoch(self, trainer, epoch: int, metrics: dict[str, Any]) -> None:
        if self.writer is None:
            return
        for key, value in metrics.items():
            if isinstance(value, (int, float)) and key.startswith(("training_", "validation_")):
                split, _, name = key.partition("_")
                self.writer.add_scalar(f"{split}/{name}", value, epoch)
        self.writer.flush()

    def on_end(self, trainer, metrics: dict[str, Any]) -> None:
        if self.writer is not None:
            self.writer.close()
