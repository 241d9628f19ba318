"""The output folder of a training run: refuse to overwrite, start over, or check a resume."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from distrain.errors import UsageError
from distrain.job import history
from distrain.job.disk import remove_leftovers, write_text_atomically

logger = logging.getLogger(__name__)


def prepare_serialization_dir(
    directory: Path, force: bool, config: dict[str, Any], recover: bool = False, workers: int = 1
) -> None:
    """Refuse to overwrite a previous run unless ``force``; with ``recover`` check that the config
    still fits the saved run. Then save the resolved config.

    Only the primary process of a job calls this (node 0's parent, or global rank 0 when launched by
    torchrun/srun); other nodes never check, clear or write the folder: their workers only add their
    own ``out_worker{rank}.log`` after the rendezvous, when this has already happened.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--serialization-dir {directory} exists and is not a directory")
    if recover:
        from distrain.training.resume_check import check_recoverable

        latest = check_recoverable(directory, config, workers)
        if latest is None:
            logger.info("--recover: %s has no complete checkpoint yet; starting the run from the beginning", directory)
        else:
            logger.info("recovering from %s", latest)
        remove_leftovers(directory)
        history.record(directory, "recover", checkpoint=latest.name if latest is not None else None)
    elif directory.is_dir() and any(directory.iterdir()):
        if not force:
            raise UsageError(
                f"--serialization-dir {directory} is not empty; pass --recover to resume it or --force to start over"
            )
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_text_atomically(directory / "config.json", json.dumps(config, indent=2))
    if not recover:
        history.record(directory, "started", workers=workers)
