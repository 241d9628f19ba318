"""Checkpoints under ``DIR/checkpoints/``: written whole to a temporary name, then renamed.

A checkpoint is a folder ``epoch_NNNN`` holding ``model.safetensors`` and ``training_state.pt``
(optimizer, scheduler, tracker, epoch). A crash mid-write leaves only a ``.tmp-*`` folder, which is
never taken for the latest checkpoint and is cleaned up by the next write.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

_CHECKPOINT = re.compile(r"epoch_(\d+)$")
BEST_WEIGHTS = "best.safetensors"


def save_weights(model: torch.nn.Module, path: Path) -> None:
    """Atomically write ``model``'s weights as safetensors (shared tensors handled)."""
    from safetensors.torch import save_model

    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}-")
    os.close(handle)
    try:
        save_model(model, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_weights(model: torch.nn.Module, path: Path) -> None:
    from safetensors.torch import load_model

    missing, unexpected = load_model(model, str(path), strict=False)
    if missing or unexpected:
        raise ValueError(f"{path}: weights do not fit the model (missing {missing}, unexpected {unexpected})")


class Checkpointer:
    def __init__(self, directory: Path, keep: int = 2) -> None:
        self.directory = directory
        self.keep = keep

    def save(self, epoch: int, model: torch.nn.Module, training_state: dict[str, Any]) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        for stale in self.directory.glob(".tmp-*"):
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink(missing_ok=True)
        final = self.directory / f"epoch_{epoch:04d}"
        temporary = Path(tempfile.mkdtemp(dir=self.directory, prefix=f".tmp-{final.name}-"))
        try:
            save_weights(model, temporary / "model.safetensors")
            torch.save(training_state, temporary / "training_state.pt")
            if final.exists():
                shutil.rmtree(final)
            os.replace(temporary, final)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        for old in self.checkpoints()[: -self.keep] if self.keep > 0 else []:
            shutil.rmtree(old, ignore_errors=True)
        return final

    def checkpoints(self) -> list[Path]:
        """Complete checkpoints, oldest first."""
        if not self.directory.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.directory.iterdir() if (m := _CHECKPOINT.match(p.name))]
        return [path for _, path in sorted(found)]

    def latest(self) -> Path | None:
        checkpoints = self.checkpoints()
        return checkpoints[-1] if checkpoints else None

    def save_best(self, model: torch.nn.Module) -> None:
        save_weights(model, self.directory / BEST_WEIGHTS)

    @property
    def best_weights(self) -> Path:
        return self.directory / BEST_WEIGHTS
