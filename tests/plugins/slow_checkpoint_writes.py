"""Test plugin, a slow disk simulated: every checkpoint's weights file is written as usual, then the
writer pauses 50 ms before the rest of the checkpoint and the rename, so a ``kill -9`` aimed at the
moment a write begins lands inside it rather than racing a write that takes a millisecond."""

from __future__ import annotations

import time

from distrain.training import checkpointing

_write = checkpointing.save_state_file


def _slow_write(state, path) -> None:
    _write(state, path)
    time.sleep(0.05)


checkpointing.save_state_file = _slow_write
