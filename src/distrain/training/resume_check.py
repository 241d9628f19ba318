"""May a run be resumed with this config? Changes that alter what is trained are refused.

Resuming must continue the same computation, so the model, data, readers, vocabulary, seed,
optimizer and the *global* batch are fixed. What only decides how long, how often or on how many
workers training runs may change: ``num_epochs``, ``patience``, checkpoint frequency, callbacks,
the ``distributed`` block, the validation loader. The per-worker ``batch_size`` may change with the
number of workers as long as ``batch_size × workers`` (the global batch) stays the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from distrain.training.checkpointing import CHECKPOINTS_FOLDER, CheckpointFolders, CheckpointError

#: config key paths (and everything under them) that a resumed run may change
HARMLESS = (
    "trainer.num_epochs",
    "trainer.patience",
    "trainer.progress_bar",
    "trainer.keep_checkpoints",
    "trainer.save_every_num_batches",
    "trainer.save_every_num_seconds",
    "trainer.skip_nonfinite_steps",
    "trainer.callbacks",
    "trainer.checkpoint_format",
    "trainer.checkpointer",
    "trainer.cuda_device",
    "trainer.activation_checkpointing",
    "trainer.activation_offloading",
    "distributed",
    "evaluate_on_test",
    "validation_data_loader",
    # compared as global quantities below
    "data_loader.batch_size",
    "data_loader.batch_sampler.batch_size",
    "data_loader.max_tokens_per_batch",
    "data_loader.global_batch_size",
    # cuts the same global batches into other micro-batches: the checkpoint counts samples too
    "data_loader.max_micro_batch_size",
)


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Key paths whose values differ (objects compared key by key, anything else as a whole)."""
    if isinstance(old, dict) and isinstance(new, dict):
        found: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            child = f"{path}.{key}" if path else str(key)
            if key not in old or key not in new:
                found.append(child)
            else:
                found += differences(old[key], new[key], child)
        return found
    return [] if old == new else [path or "(whole config)"]


def _harmless(path: str) -> bool:
    return any(path == allowed or path.startswith(allowed + ".") for allowed in HARMLESS)


def _global(config: dict[str, Any], key: str, workers: int) -> int | None:
    from distrain.data.loader import DataLoaderConfig

    loader = config.get("data_loader") or {}
    sampler = loader.get("batch_sampler")
    if key == "batch_size" and loader.get("global_batch_size") is not None:
        return int(loader["global_batch_size"])  # the same on any world
    value = loader.get(key, getattr(DataLoaderConfig(), key))
    if key == "batch_size" and isinstance(sampler, dict) and sampler.get("batch_size") is not None:
        value = sampler["batch_size"]  # a batch sampler's own batch size is the per-worker one
    return None if value is None else int(value) * workers


def _data_parallel(config: dict[str, Any], workers: int) -> int:
    """The workers that receive distinct slices (those holding parts of one model share one)."""
    distributed = config.get("distributed") or {}
    split = int(distributed.get("tensor_parallel_size", 1)) * int(distributed.get("pipeline_parallel_size", 1))
    return max(1, workers // split)


def changes_that_matter(old: dict[str, Any], new: dict[str, Any], old_workers: int, new_workers: int) -> list[str]:
    """One description per change that would make the resumed run differ from the original."""
    found = [f"{path} changed" for path in differences(old, new) if not _harmless(path)]
    for key in ("batch_size", "max_tokens_per_batch"):
        before = _global(old, key, _data_parallel(old, old_workers))
        after = _global(new, key, _data_parallel(new, new_workers))
        if before != after:
            found.append(
                f"data_loader.{key} x workers changed from {before} ({old_workers} worker(s)) "
                f"to {after} ({new_workers} worker(s)); keep the global value the same"
            )
    return found


def check_recoverable(serialization_dir: Path, config: dict[str, Any], workers: int) -> Path | None:
    """The checkpoint ``--recover`` resumes from, or None when the run was stopped before its first
    checkpoint (nothing trained is lost: it starts from the beginning, as a requeued job's ``--recover``
    must); raise :class:`CheckpointError` if it must not resume."""
    serialization_dir = Path(serialization_dir)
    saved_config = serialization_dir / "config.json"
    if not saved_config.is_file():
        raise CheckpointError(f"--recover: {serialization_dir} holds no previous run (no config.json)")
    latest = CheckpointFolders(serialization_dir / CHECKPOINTS_FOLDER).latest()
    if latest is None:
        return None
    meta = read_checkpoint_meta(latest)
    try:
        old = json.loads(saved_config.read_text())
    except ValueError as error:
        raise CheckpointError(f"{saved_config}: not valid JSON ({error})") from None
    changes = changes_that_matter(old, config, int(meta.get("world_size", 1)), workers)
    if changes:
        raise CheckpointError(
            f"--recover: the config differs from the run in {serialization_dir} in ways that change "
            f"training: {'; '.join(changes)} (start a new run, or --force to overwrite)"
        )
    return latest


def read_checkpoint_meta(checkpoint: Path) -> dict[str, Any]:
    path = checkpoint / "meta.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise CheckpointError(f"{path}: unreadable checkpoint description ({error.__class__.__name__})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: not a checkpoint description")
    return meta
