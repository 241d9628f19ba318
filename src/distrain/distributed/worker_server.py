"""The fork server workers are started from, started early so its imports overlap the parent's work.

A spawned worker spends seconds importing torch, torch's compiler front end and the built-in
components before its first step. The fork server imports them once (:mod:`distrain.distributed.preload`)
and forks every worker from itself. ``distrain train`` starts it as soon as the config is evaluated,
before the parent's own imports, validation and data reading, so by the time workers are wanted it is
usually ready. This module imports nothing heavy, so starting the server costs the parent nothing.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
from typing import Any

PRELOAD = ["distrain.distributed.preload"]


def use_worker_server() -> None:
    """Make the fork server (started now or later) preload what workers need."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(PRELOAD)


def start_worker_server(config: dict[str, Any]) -> None:
    """Start the fork server now if this config will spawn workers from it (a ``distributed`` block,
    no external launcher, the default start method)."""
    from distrain.distributed.environments import detect

    if not config.get("distributed") or detect() is not None:
        return
    if os.environ.get("DISTRAIN_START_METHOD", "forkserver") != "forkserver":
        return
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    use_worker_server()
    multiprocessing.forkserver.ensure_running()
