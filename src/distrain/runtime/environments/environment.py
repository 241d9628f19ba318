"""What an external launcher tells a process about its place in the job."""

from __future__ import annotations

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
