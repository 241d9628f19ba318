"""A callback that records, per rank, whether torch's compiler front end (``torch._dynamo``) had been
imported by the end of the first optimizer step, and what it compiled by then (dynamo's own counters: frames
compiled, graphs, graph breaks): the launch tests check that workers which compile nothing never import it, and
that the fork server preloaded it for those that do; the compile tests, that a compiled run really compiled."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from distrain.compat.deferred_compiler import compiler_loaded
from distrain.training.callback import Callback


@Callback.register("test_compiler_probe")
class CompilerProbe(Callback):
    """Writes ``{"loaded": ..., "loaded_before_start": ...}`` to ``folder/rank{R}.json`` at step 1."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        # the callback is built in the worker, before its model and strategy
        self.loaded_at_build = compiler_loaded()

    def on_step(self, trainer, step, loss) -> None:
        if step == 1:
            record = {"loaded": compiler_loaded(), "loaded_at_build": self.loaded_at_build,
                      "stand_in": type(sys.modules.get("torch._dynamo")).__name__, **compiled_so_far()}
            (self.folder / f"rank{trainer.world.rank}.json").write_text(json.dumps(record))


def compiled_so_far() -> dict:
    """Dynamo's counters in this process (read without importing the compiler where nothing imported it)."""
    utils = sys.modules.get("torch._dynamo.utils") if compiler_loaded() else None
    counters = getattr(utils, "counters", None) or {}
    return {"frames_compiled": counters.get("frames", {}).get("ok", 0),
            "graphs": counters.get("stats", {}).get("unique_graphs", 0),
            "graph_breaks": sum(counters.get("graph_break", {}).values())}
