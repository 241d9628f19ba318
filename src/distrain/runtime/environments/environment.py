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
    #: how often the launcher started this process's workers again (torchrun's ``--max-restarts``)
    restart_count: int = 0
    #: the launcher's name for the whole job, the same on every node and across restarts; None when it has
    #: none of its own (torchrun's default rendezvous id "none")
    job_id: str | None = None
