"""torchrun / torchelastic: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT."""

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
    )
