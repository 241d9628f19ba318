"""A test callback that makes mixed precision observable: the dtypes the model's linear layers
produce, in training and in validation, written per rank to ``record_dir/dtypes.rankR.json``."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from distrain.training.callback import Callback


@Callback.register("autocast_probe")
class AutocastProbe(Callback):
    def __init__(self, record_dir: str) -> None:
        self.record_dir = Path(record_dir)
        self.seen: dict[str, set[str]] = {"train": set(), "validation": set()}

    def on_start(self, trainer) -> None:
        def record(module, inputs, output) -> None:
            if isinstance(output, torch.Tensor):
                self.seen["train" if module.training else "validation"].add(str(output.dtype).removeprefix("torch."))

        for module in trainer.model.modules():
            if isinstance(module, torch.nn.Linear):
                module.register_forward_hook(record)

    def on_epoch(self, trainer, epoch, metrics) -> None:
        self.record_dir.mkdir(parents=True, exist_ok=True)
        path = self.record_dir / f"dtypes.rank{trainer.world.rank}.json"
        path.write_text(json.dumps({phase: sorted(dtypes) for phase, dtypes in self.seen.items()}))
