"""A callback that records every optimizer step's mean training loss on each worker."""

from __future__ import annotations

import json
from pathlib import Path

from distrain.training.callback import Callback


@Callback.register("test_step_losses")
class StepLosses(Callback):
    """Appends each step's mean loss on this worker (from the trainer's running sums) to
    ``folder/rank{R}.jsonl``, with the step's ``sum`` (loss x weight) and ``weight`` (samples, or the
    model's ``loss_weight``), so the step's loss over all workers is their sums over their weights."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.seen = (0.0, 0.0)

    def on_start(self, trainer) -> None:
        """A resumed run starts from the restored running sums, not from zero."""
        self.seen = (float(trainer.position.loss_sum), float(trainer.position.loss_weight))

    def on_step(self, trainer, step, loss) -> None:
        total, weight = float(trainer.position.loss_sum), float(trainer.position.loss_weight)
        if weight < self.seen[1]:  # a new epoch started from zero
            self.seen = (0.0, 0.0)
        step_sum, step_weight = total - self.seen[0], weight - self.seen[1]
        step_loss = step_sum / max(step_weight, 1e-12)
        self.seen = (total, weight)
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / f"rank{trainer.world.rank}.jsonl", "a") as out:
            out.write(json.dumps({"step": step, "loss": step_loss, "sum": step_sum,
                                  "weight": step_weight}) + "\n")
