"""The primary worker's progress bar during an epoch: steps, and twice a second the loss, local metrics and
examples/s. Reading those figures is the only host synchronisation the display adds, and only when shown."""

from __future__ import annotations

import time
from typing import Any

from distrain.metrics.metric import local_only
from distrain.training.recovery import EpochProgress


class ProgressDisplay:
    """The primary's tqdm bar over one epoch's optimizer steps (a resumed epoch starts where it stopped)."""

    def __init__(self, trainer: Any, epoch: int) -> None:
        from tqdm import tqdm

        self.trainer = trainer
        self.started = self.last_shown = time.monotonic()
        self.samples_before = trainer.position.samples
        self.bar = tqdm(total=trainer.steps_per_epoch, initial=trainer.position.batches // trainer.accumulation,
                        desc=f"epoch {epoch + 1}/{trainer.num_epochs}", unit="step", leave=False, dynamic_ncols=True)

    def update(self, done: EpochProgress) -> float | None:
        """Advance one step; return the loss when it was shown."""
        self.bar.update(1)
        if time.monotonic() - self.last_shown <= 0.5:
            return None
        self.last_shown = time.monotonic()
        shown_loss = float(done.loss_sum / done.loss_weight.clamp(min=1e-12))
        speed = (done.samples - self.samples_before) * self.trainer.world.dp_size / (self.last_shown - self.started)
        with local_only():
            metrics = _short(self.trainer.model.get_metrics())
        self.bar.set_postfix(loss=f"{shown_loss:.4f}", **metrics, examples_per_s=f"{speed:.0f}")
        return shown_loss

    def close(self) -> None:
        self.bar.close()


def _short(metrics: dict[str, float]) -> dict[str, str]:
    return {name: f"{value:.4f}" for name, value in metrics.items() if isinstance(value, float)}
