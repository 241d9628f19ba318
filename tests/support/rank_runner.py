"""Run a function on N real worker processes joined by gloo, through distrain's own launcher."""

from __future__ import annotations

from typing import Any, Callable


def run_on_ranks(function: Callable[..., Any], world_size: int, *args: Any, timeout: float = 60.0) -> None:
    """Call ``function(world, *args)`` on ``world_size`` spawned CPU processes with a process group.

    ``function`` must be importable by name (defined at the top level of a module). Collectives
    time out after ``timeout`` seconds, so a mismatched collective fails instead of hanging.
    Results travel back through files the function writes; a raising rank fails the call.
    """
    from distrain.distributed.config import DistributedConfig
    from distrain.runtime.spawn import spawn

    spawn(function, args, DistributedConfig(cuda_devices=[-1] * world_size, timeout=timeout), None)
