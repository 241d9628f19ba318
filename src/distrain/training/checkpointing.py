"""Checkpoints under ``DIR/checkpoints/``: written whole to a temporary name, then renamed.

A checkpoint is a folder ``epoch_EEEE_batch_BBBBBBBB`` named after its data position (the next
epoch to train and the global batches of it already consumed). It holds ``model.safetensors``, ``meta.json`` and
``training_state.pt`` (optimizer, scheduler, tracker, callbacks, RNG states, epoch progress), the
latter loaded with ``weights_only=True``. Files are fsynced before the folder is renamed, so a kill
at any moment leaves either the complete checkpoint or a ``.tmp-*`` folder, which is never taken
for the latest and is removed by the next write. Old checkpoints are renamed away before they are
deleted, so a half-deleted folder never carries a checkpoint's name either.

The ``keep`` most recent checkpoints are kept, plus the one marked best (named in ``best.txt``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch

from distrain.errors import BadInput
from distrain.job.disk import fsync, remove_leftovers, replacing, torch_save, write_text_atomically, writing

#: the folder of a run folder that holds its checkpoints
CHECKPOINTS_FOLDER = "checkpoints"
_CHECKPOINT = re.compile(r"epoch_(\d+)_batch_(\d+)$")
BEST_WEIGHTS = "best.safetensors"
BEST_POINTER = "best.txt"
MODEL_FILE = "model.safetensors"
STATE_FILE = "training_state.pt"
#: a few plain facts (position, step, world size) the CLI reads without loading the state
META_FILE = "meta.json"


class CheckpointError(BadInput):
    """A checkpoint that is missing, truncated, corrupt or does not fit the run resuming from it."""


def save_weights(model: torch.nn.Module, path: Path) -> None:
    """Atomically write ``model``'s weights as safetensors."""
    save_state_file(model.state_dict(), path)


def load_weights(model: torch.nn.Module, path: Path) -> None:
    model.load_state_dict(load_state_file(path, model))


def save_state_file(state: dict[str, torch.Tensor], path: Path) -> None:
    """Atomically write a state dict as safetensors; tensors that share memory (tied weights) are
    written once, under their first name."""
    from safetensors.torch import save_file

    unique: dict[str, torch.Tensor] = {}
    seen: set[tuple] = set()
    for name, tensor in state.items():
        key = _storage_key(tensor)
        if key not in seen:
            seen.add(key)
            unique[name] = tensor.detach().to("cpu").contiguous()
    with replacing(path) as temporary:
        save_file(unique, str(temporary), metadata={"format": "pt"})


def trained_state(model: torch.nn.Module, weights: dict[str, Any]) -> dict[str, Any]:
    """``weights`` less the frozen base of an adapted model (see :mod:`distrain.modules.adapter`): what a
    checkpoint or an archive keeps."""
    frozen = getattr(model, "frozen_state_names", frozenset())
    return {name: tensor for name, tensor in weights.items() if name not in frozen} if frozen else weights


def load_state_file(path: Path, model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The full state dict of ``model`` stored in ``path``: a name the file lacks is accepted only when
    it is tied to one the file has (the same tensor in ``model``); anything else does not fit."""
    from safetensors.torch import load_file

    try:
        stored = load_file(str(path))
    except Exception as error:  # noqa: BLE001 - safetensors raises several kinds; all mean "unreadable"
        raise CheckpointError(f"{path}: cannot load weights ({_one_line(error)})") from None
    expected = model.state_dict()
    frozen = getattr(model, "frozen_state_names", frozenset())  # an adapter's base: the model has it already
    groups: dict[tuple, list[str]] = {}
    for name, tensor in expected.items():
        groups.setdefault(_storage_key(tensor), []).append(name)
    state, missing = {}, []
    for name, tensor in expected.items():
        source = next((alias for alias in groups[_storage_key(tensor)] if alias in stored), None)
        if source is None:
            if name not in frozen:
                missing.append(name)
        else:
            state[name] = stored[source]
    unexpected = sorted(set(stored) - set(expected))
    if missing or unexpected:
        raise CheckpointError(f"{path}: weights do not fit the model (missing {missing}, unexpected {unexpected})")
    return state


def _storage_key(tensor: torch.Tensor) -> tuple:
    original = tensor
    if hasattr(tensor, "to_local"):  # a sharded parameter (DTensor): its local shard's storage
        tensor = tensor.to_local()
    if tensor.device.type == "meta" or tensor.numel() == 0:
        return (id(original),)
    return (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape),
            tuple(tensor.stride()), tensor.dtype)


def load_training_state(checkpoint: Path) -> dict[str, Any]:
    """The training state of ``checkpoint``; never unpickles anything but plain data and tensors."""
    path = checkpoint / STATE_FILE
    if not path.is_file():
        raise CheckpointError(f"{checkpoint}: incomplete checkpoint (no {STATE_FILE})")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - truncated zip, bad pickle opcode, refused global...
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({_one_line(error)})") from None
    if not isinstance(state, dict) or "position" not in state:
        raise CheckpointError(f"{path}: not a distrain training state")
    return state


class CheckpointFolders:
    """The checkpoint folders of a run: named by position, written under a temporary name and renamed whole,
    the ``keep`` newest (and the best) kept. ``trainer.checkpointer`` in a config is the retention policy,
    not this."""

    def __init__(self, directory: Path, keep: int = 2) -> None:
        self.directory = Path(directory)
        self.keep = keep

    @staticmethod
    def name(epoch: int, batches: int) -> str:
        return f"epoch_{epoch:04d}_batch_{batches:08d}"

    def save(
        self, epoch: int, batches: int, weights: dict[str, torch.Tensor] | None, training_state: dict[str, Any],
        is_best: bool = False, temporary: Path | None = None,
    ) -> Path:
        """Write the checkpoint for data position (``epoch``, ``batches``) and prune old ones.
        ``weights`` None: the model is in ``temporary`` (from :meth:`start`) already, written sharded."""
        final = self.directory / self.name(epoch, batches)
        with writing(final, names_what_failed=True):
            temporary = temporary or self.start(epoch, batches)
            try:
                if weights is not None:
                    save_state_file(weights, temporary / MODEL_FILE)
                torch_save(training_state, temporary / STATE_FILE)
                summary = {key: training_state.get(key) for key in ("position", "step", "world_size")}
                (temporary / META_FILE).write_text(json.dumps(summary))
                if final.exists():
                    self._discard(final)
                os.replace(temporary, final)
                fsync(self.directory)
            except BaseException:
                shutil.rmtree(temporary, ignore_errors=True)
                raise
        if is_best:
            write_text_atomically(self.directory / BEST_POINTER, final.name)
        self._prune()
        return final

    def start(self, epoch: int, batches: int) -> Path:
        """A fresh temporary folder for the checkpoint of (``epoch``, ``batches``): files written into
        it by every worker become the checkpoint when :meth:`save` renames it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self._remove_leftovers()
        return Path(tempfile.mkdtemp(dir=self.directory, prefix=f".tmp-{self.name(epoch, batches)}-"))

    def checkpoints(self) -> list[Path]:
        """Complete checkpoints, oldest first."""
        if not self.directory.is_dir():
            return []
        found = []
        for path in self.directory.iterdir():
            match = _CHECKPOINT.match(path.name)
            if match and path.is_dir():
                found.append(((int(match.group(1)), int(match.group(2))), path))
        return [path for _, path in sorted(found)]

    def latest(self) -> Path | None:
        checkpoints = self.checkpoints()
        return checkpoints[-1] if checkpoints else None

    def best(self) -> Path | None:
        pointer = self.directory / BEST_POINTER
        if not pointer.is_file():
            return None
        path = self.directory / pointer.read_text().strip()
        return path if path.is_dir() else None

    def save_best(self, weights: dict[str, torch.Tensor]) -> None:
        save_state_file(weights, self.directory / BEST_WEIGHTS)

    @property
    def best_weights(self) -> Path:
        return self.directory / BEST_WEIGHTS

    # ------------------------------------------------------------------------------- internals
    def _prune(self) -> None:
        if self.keep <= 0:
            return
        best = self.best()
        for old in self.checkpoints()[: -self.keep]:
            if old != best:
                self._discard(old)

    def _discard(self, path: Path) -> None:
        doomed = Path(tempfile.mkdtemp(dir=self.directory, prefix=".tmp-discard-"))
        os.replace(path, doomed / path.name)
        shutil.rmtree(doomed, ignore_errors=True)

    def _remove_leftovers(self) -> None:
        remove_leftovers(self.directory)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{error.__class__.__name__}: {text[:200]}" if text else error.__class__.__name__
