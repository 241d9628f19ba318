"""Which exceptions are the user's input at fault (exit 2, one line) and which are run failures."""

from __future__ import annotations

BAD_INPUT = 2
RUN_FAILED = 1


class UsageError(Exception):
    """A command-line flag or output directory that cannot be used as given."""


class ReportedError(Exception):
    """An error a worker process already classified; the parent reports it with the same status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def classify(error: BaseException) -> tuple[int | None, str]:
    """``(exit status, message)`` for errors we report ourselves; ``(None, "")`` for real bugs."""
    from distrain.archive import ArchiveError
    from distrain.config.errors import ConfigError
    from distrain.data.reader import DataError
    from distrain.plugins import PluginError
    from distrain.registry import RegistryError

    from distrain.training.checkpointing import CheckpointError

    if isinstance(error, ReportedError):
        return error.status, str(error)
    if isinstance(error, (ConfigError, RegistryError, PluginError, DataError, ArchiveError, UsageError, CheckpointError)):
        return BAD_INPUT, str(error)
    from distrain.distributed.launch import WorkerFailed
    from distrain.training.preemption import Preempted
    from distrain.training.trainer import TrainingError

    if isinstance(error, (WorkerFailed, TrainingError, Preempted)):
        return RUN_FAILED, str(error)
    return None, ""
