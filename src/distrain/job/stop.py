"""Stop cleanly when the job is asked to stop (SIGTERM from a scheduler, SIGINT from Ctrl-C).

A signal only raises a flag. The trainer reads the flags of all workers once per optimizer step
(:func:`~distrain.training.step_agreement.agree`, the step's one small agreement),
so every worker stops after the same step, writes one checkpoint together, and nobody waits
forever in a collective that a stopped peer will never join.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from typing import Iterator

from distrain.errors import RunFailed

logger = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Preempted(RunFailed):
    """Training stopped on a signal after writing a checkpoint; ``--recover`` continues it."""

    def __init__(self, message: str, checkpoint: str | None = None) -> None:
        super().__init__(message)
        self.checkpoint = checkpoint


class StopRequest:
    """Remembers the first stop signal this process received."""

    def __init__(self) -> None:
        self.signal_name: str | None = None

    def _handle(self, number: int, frame) -> None:  # noqa: ARG002 - signal handler signature
        if self.signal_name is None:
            self.signal_name = signal.Signals(number).name
            logger.warning("%s received: stopping after the current step and writing a checkpoint", self.signal_name)

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopRequest]:
        """Catch stop signals while training (main thread only); the old handlers come back after."""
        import threading

        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {number: signal.signal(number, self._handle) for number in STOP_SIGNALS}
        try:
            yield self
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
