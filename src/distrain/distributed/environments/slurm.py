"""SLURM (``srun``): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the job's node list.

The first node of ``SLURM_JOB_NODELIST`` hosts the rendezvous; the port is ``MASTER_PORT`` when set,
else derived from the job id so every task of the job picks the same one.
"""

from __future__ import annotations

import re
from typing import Mapping

from distrain.distributed.environments.environment import LaunchedProcess


def detect(env: Mapping[str, str]) -> LaunchedProcess | None:
    if "SLURM_PROCID" not in env or "SLURM_NTASKS" not in env:
        return None
    if env.get("SLURM_JOB_NAME") in ("bash", "interactive") and "SLURM_STEP_ID" not in env:
        return None  # an interactive allocation shell, not a task started by srun
    nodes = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST", "127.0.0.1")
    job_id = int(env.get("SLURM_JOB_ID", "0") or 0)
    return LaunchedProcess(
        launcher="slurm",
        rank=int(env["SLURM_PROCID"]),
        world_size=int(env["SLURM_NTASKS"]),
        local_rank=int(env.get("SLURM_LOCALID", "0")),
        local_world_size=_tasks_on_this_node(env),
        master_addr=env.get("MASTER_ADDR") or first_host(nodes),
        master_port=int(env.get("MASTER_PORT") or 15000 + job_id % 20000),
    )


def _tasks_on_this_node(env: Mapping[str, str]) -> int:
    # SLURM_STEP_TASKS_PER_NODE looks like "2(x3),1": the first entry is enough for thread counts
    text = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE") or "1"
    match = re.match(r"(\d+)", text)
    return int(match.group(1)) if match else 1


def first_host(nodelist: str) -> str:
    """The first host of a SLURM node list: ``gpu[03-05,07],cpu1`` → ``gpu03``."""
    match = re.match(r"([^,\[]+)(?:\[([^\]]+)\])?", nodelist.strip())
    if not match:
        return nodelist
    prefix, ranges = match.group(1), match.group(2)
    if not ranges:
        return prefix
    first = ranges.split(",")[0].split("-")[0]
    return prefix + first
