"""Where a process was launched: each cluster kind reads its own variables in its own module."""

from __future__ import annotations

import os

from distrain.runtime.environments import slurm, torchelastic
from distrain.runtime.environments.environment import LaunchedProcess


def detect() -> LaunchedProcess | None:
    """The launcher that started this process, or None when it was started by hand."""
    for environment in (torchelastic, slurm):
        found = environment.detect(os.environ)
        if found is not None:
            return found
    return None
