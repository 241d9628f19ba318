"""torchrun / torchelastic: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, and
TORCHELASTIC_RESTART_COUNT and TORCHELASTIC_RUN_ID (the ``--rdzv-id``) that say which job and which attempt."""

from __future__ import annotations

from typing import Mapping

from distrain.runtime.environments.environment import LaunchedProcess

REQUIRED = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def detect(env: Mapping[str, str]) -> LaunchedProcess | None:
    if not all(name in env for name in REQUIRED):
        return None
    return LaunchedProcess(
        launcher="torchrun",
        rank=int(env["RANK"]),
        world_size=int(env["WORLD_SIZE"]),
        local_rank=int(env["LOCAL_RANK"]),
        local_world_size=int(env.get("LOCAL_WORLD_SIZE", env["WORLD_SIZE"])),
        master_addr=env["MASTER_ADDR"],
        master_port=int(env["MASTER_PORT"]),
        restart_count=int(env.get("TORCHELASTIC_RESTART_COUNT") or 0),
        job_id=None if env.get("TORCHELASTIC_RUN_ID", "none") == "none" else env["TORCHELASTIC_RUN_ID"],
    )
