"""The chaos run's eyes inside the job (loaded with ``--include-package chaos_probe``; ``scripts/`` on the path).

It computes nothing and changes no result: it notes when each phase a fault may aim at begins and ends, one
line per event appended to ``$DISTRAIN_CHAOS_EVENTS``, and holds the phases that take a millisecond open for
``$DISTRAIN_CHAOS_HOLD_S`` seconds (a slow disk simulated), so a kill aimed at them lands inside:

- ``write PATH``: a weights file (a checkpoint's, the best weights, the archive's staging copy) was written,
  and the writer pauses before going on; ``state PATH``: a checkpoint's training state is about to be written,
  after a pause (the checkpoint's folder is still a ``.tmp-*`` one in both);
- ``validation begin`` / ``validation end`` around each validation pass (it is as long as the data makes it);
- ``cache_build KEY``: the dataset cache entry is read and indexed; the pause comes after the files are
  written, before the entry is published;
- ``archive begin`` / ``archive end`` around the archive's writing;
- ``worker SIZE``: a worker of a world of SIZE starts building its model (so its pid and rank are known).

Each line: ``monotonic-seconds pid rank event detail``. The injector (scripts/chaos.py) reads the file.
"""

from __future__ import annotations

import os
import time

from distrain.data import cache
from distrain.experiment import assemble
from distrain.experiment.archive import format as archive
from distrain.training import checkpointing, evaluation

EVENTS = os.environ.get("DISTRAIN_CHAOS_EVENTS")
HOLD_S = float(os.environ.get("DISTRAIN_CHAOS_HOLD_S", "0.1"))


def note(event: str, detail: str = "") -> None:
    if not EVENTS:
        return
    rank = os.environ.get("DISTRAIN_CHAOS_RANK", os.environ.get("RANK", "-"))
    line = f"{time.monotonic():.6f} {os.getpid()} {rank} {event} {detail}\n".encode()
    descriptor = os.open(EVENTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def wrap_state_file_writes() -> None:
    original = checkpointing.save_state_file

    def save_state_file(state, path) -> None:
        original(state, path)
        note("write", str(path))
        time.sleep(HOLD_S)

    checkpointing.save_state_file = save_state_file


def wrap_training_state_writes() -> None:
    original = checkpointing.torch_save

    def torch_save(state, path) -> None:
        note("state", str(path))
        time.sleep(HOLD_S)
        original(state, path)

    checkpointing.torch_save = torch_save


def wrap_validation() -> None:
    original = evaluation.evaluate

    def evaluate(*args, **kwargs):
        note("validation", "begin")
        try:
            return original(*args, **kwargs)
        finally:
            note("validation", "end")

    evaluation.evaluate = evaluate


def wrap_cache_builds() -> None:
    original = cache.DatasetCache._write

    def _write(self, key, build):
        def slow_build(directory):
            note("cache_build", key)
            meta = build(directory)
            time.sleep(HOLD_S)
            return meta

        return original(self, key, slow_build)

    cache.DatasetCache._write = _write


def wrap_archive_writes() -> None:
    original = archive.write_archive

    def write_archive(*args, **kwargs):
        note("archive", "begin")
        path = original(*args, **kwargs)
        note("archive", "end")
        return path

    archive.write_archive = write_archive
    assemble.write_archive = write_archive  # imported by name there


def rank_for_notes() -> None:
    """Spawned workers learn their rank after this module is imported: take it from the process group."""
    original = assemble.assemble

    def assemble_noting_rank(world, *args, **kwargs):
        os.environ["DISTRAIN_CHAOS_RANK"] = str(world.rank)
        note("worker", str(world.size))
        return original(world, *args, **kwargs)

    assemble.assemble = assemble_noting_rank


if EVENTS and not getattr(checkpointing, "_chaos_probe", False):
    checkpointing._chaos_probe = True  # once per process, however often the plugin is imported
    wrap_state_file_writes()
    wrap_training_state_writes()
    wrap_validation()
    wrap_cache_builds()
    wrap_archive_writes()
    rank_for_notes()
