"""Run the CLI as a user would: ``python -m distrain ARGS`` in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import PLUGINS, ROOT


def cli_environment(env: dict | None = None) -> dict:
    """The environment a CLI process gets in tests: test plugins importable, offline, a test cache."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(PLUGINS), environment.get("PYTHONPATH", "")]
    )
    environment.setdefault("HF_HUB_OFFLINE", "1")
    environment.update(env or {})
    return environment


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m distrain ARGS`` in a fresh process; test plugins importable; output captured."""
    environment = cli_environment(env)
    return subprocess.run(
        [sys.executable, "-m", "distrain", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment,
    )
