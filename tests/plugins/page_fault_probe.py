"""A callback that counts this worker's page faults (minor ones: memory the process maps afresh) per
optimizer step after a warm-up, for the host-memory tests (``distrain.compat.host_memory``)."""

from __future__ import annotations

import json
import resource
from pathlib import Path

from distrain.training.callback import Callback


@Callback.register("test_page_fault_probe")
class PageFaultProbe(Callback):
    """Writes ``{"faults_per_step": ..., "steps": ...}`` to ``folder/rank{R}.json`` at the epoch's last step."""

    def __init__(self, folder: str, warmup: int = 5) -> None:
        self.folder = Path(folder)
        self.warmup = warmup
        self.faults_at_warmup = 0

    def on_step(self, trainer, step, loss) -> None:
        if step == self.warmup:
            self.faults_at_warmup = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        if step == trainer.steps_per_epoch:
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - self.faults_at_warmup
            record = {"faults_per_step": faults / (step - self.warmup), "steps": step - self.warmup}
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / f"rank{trainer.world.rank}.json").write_text(json.dumps(record))
