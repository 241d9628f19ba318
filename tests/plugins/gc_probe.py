"""A callback that records whether this worker's garbage collector runs, and how many objects it was
handed frozen (what the fork server or the parent imported), for ``tests/compat/test_import_gc.py``."""

from __future__ import annotations

import gc
import json
from pathlib import Path

from distrain.training.callback import Callback


@Callback.register("test_gc_probe")
class GarbageCollectorProbe(Callback):
    """Writes ``{"enabled": ..., "frozen": ...}`` to ``folder/rank{R}.json`` when training starts."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def on_start(self, trainer) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        record = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}
        (self.folder / f"rank{trainer.world.rank}.json").write_text(json.dumps(record))
