"""SLURM (``srun``): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and the job's node list.

The first node of ``SLURM_JOB_NODELIST`` hosts the rendezvous; the port is ``MASTER_PORT`` when set,
else derived from the job id so every task of the job picks the same one.
"""

from __future__ import annotations

import re
from typing import Mapping

from distrain.runtime.environments.environment import LaunchedProcess


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
        master_port=int(env.get("MASTER_PORT") or port_for_job(job_id)),
    )


def _tasks_on_this_node(env: Mapping[str, str]) -> int:
    # SLURM_STEP_TASKS_PER_NODE looks like "2(x3),1": the first entry is enough for thread counts
    text = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE") or "1"
    match = re.match(r"(\d+)", text)
    return int(match.group(1)) if match else 1


def port_for_job(job_id: int) -> int:
    """The rendezvous port every task of job ``job_id`` derives alike: 15000 + id mod 20000."""
    return 15000 + job_id % 20000


def expand_nodelist(nodelist: str) -> list[str]:
    """Every host of a SLURM node list, in order: ``gpu-[1,3-5],cpu1`` → gpu-1 gpu-3 gpu-4 gpu-5 cpu1.

    Ranges keep their zero padding (``node[01-03]`` → node01 node02 node03); several bracket groups
    in one name multiply out (``r[1-2]n[1-2]`` → r1n1 r1n2 r2n1 r2n2).
    """
    hosts: list[str] = []
    for name in _split_top_level(nodelist.strip()):
        hosts.extend(_expand_name(name))
    return hosts


def first_host(nodelist: str) -> str:
    """The first host of a SLURM node list: ``gpu[03-05,07],cpu1`` → ``gpu03``."""
    hosts = expand_nodelist(nodelist)
    return hosts[0] if hosts else nodelist


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside brackets: ``a[1,2],b`` → ``a[1,2]``, ``b``."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


def _expand_name(name: str) -> list[str]:
    match = re.match(r"([^\[]*)\[([^\]]*)\](.*)$", name)
    if not match:
        return [name]
    prefix, ranges, rest = match.groups()
    tails = _expand_name(rest) if rest else [""]
    return [prefix + number + tail for number in _expand_ranges(ranges) for tail in tails]


def _expand_ranges(ranges: str) -> list[str]:
    numbers: list[str] = []
    for item in ranges.split(","):
        low, sep, high = item.strip().partition("-")
        if not sep:
            numbers.append(low)
            continue
        width = len(low)
        numbers.extend(str(number).zfill(width) for number in range(int(low), int(high) + 1))
    return numbers
