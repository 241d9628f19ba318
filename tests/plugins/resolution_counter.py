"""Counts how often a process resolves a whole training config: every call that validates the tree from
its root (``resolve_object(Experiment, config, "")``) appends this process's id to the file named by
``RESOLUTION_LOG``. Imported as a plugin (``--include-package``) by the parent and by every worker."""

import os

from distrain.config import schema
from distrain.experiment import plan

_resolve = schema.resolve_object


def _counting(base, value, path, problems, lazy=False):
    if base is plan.Experiment and path == "":
        with open(os.environ["RESOLUTION_LOG"], "a") as log:
            log.write(f"{os.getpid()}\n")
    return _resolve(base, value, path, problems, lazy)


schema.resolve_object = _counting  # calls inside schema itself (nested blocks) keep the original
plan.resolve_object = _counting  # what resolve_experiment calls
