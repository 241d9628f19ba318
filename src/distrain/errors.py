"""Every error distrain reports itself, and the exit status it carries.

A leaf module: it imports nothing from distrain. Each error class says what kind it is by
subclassing :class:`BadInput` (the user's config, data, flags, archive or checkpoint: exit 2) or
:class:`RunFailed` (the run itself could not go on: exit 1); classification is an ``isinstance``
check. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

BAD_INPUT = 2
RUN_FAILED = 1


def _rebuild(cls: type, message: str, attributes: dict) -> "DistrainError":
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(attributes)
    return error


class DistrainError(Exception):
    """An error distrain reports as one line, with ``exit_status``."""

    exit_status = RUN_FAILED

    def __reduce__(self):
        # Pickled as (class, message, attributes), so a worker's error reaches the parent process
        # whole, whatever its constructor takes: same class, same status, same message.
        return _rebuild, (type(self), str(self), dict(self.__dict__))


class BadInput(DistrainError):
    """The user's input is at fault (config, data, flags, archive, checkpoint): exit status 2."""

    exit_status = BAD_INPUT


class RunFailed(DistrainError):
    """The run could not go on (a worker failed, a non-finite loss, a stop signal): exit status 1."""

    exit_status = RUN_FAILED


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class NotExportable(BadInput):
    """A model ``distrain export`` cannot write in the format asked for; the message says why."""


class ConfigError(BadInput):
    """Every problem found in a config, reported together."""

    def __init__(self, problems: list[Problem] | str, source: str | None = None) -> None:
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        self.problems = problems
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        lines = [str(problem) for problem in self.problems]
        if len(lines) == 1:
            return lines[0]
        header = f"{len(lines)} problems in the config" + (f" {self.source}" if self.source else "") + ":"
        return "\n".join([header] + [f"  {line}" for line in lines])


class UsageError(BadInput):
    """A command-line flag or output directory that cannot be used as given."""


def exit_status(error: BaseException) -> int | None:
    """The exit status for an error we report ourselves; None for real bugs (keep the traceback)."""
    return error.exit_status if isinstance(error, DistrainError) else None
