"""Where a process was launched: each cluster kind reads its own variables in its own module."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchedProcess:
    """What an external launcher (torchrun, SLURM) told this process about its place in the job."""

    launcher: str
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int


def detect() -> LaunchedProcess | None:
    """The launcher that started this process, or None when it was started by hand."""
    from distrain.distributed.environments import slurm, torchelastic

    for environment in (torchelastic, slurm):
        found = environment.detect(os.environ)
        if found is not None:
            return found
    return None
