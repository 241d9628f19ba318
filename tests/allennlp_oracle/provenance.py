"""What every golden file the oracle writes carries under ``made_by``: the command that made it, run from the
repository root with the oracle's Python, and the versions it ran on (read where it runs, not written by hand)."""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path

ORACLE = "bash ../shared/allennlp-oracle/setup.sh ORACLE"


def made_by(script: str, *arguments: str) -> dict:
    versions = {name: metadata.version(name) for name in ("allennlp", "allennlp-models", "torch", "transformers")}
    command = " ".join(["ORACLE/bin/python", f"tests/allennlp_oracle/{Path(script).name}", *arguments])
    return {"command": command, "oracle": ORACLE, "versions": {**versions, "python": platform.python_version()}}
