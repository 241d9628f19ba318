"""Which waiting requests join the running batch before the next decode step (iteration-level admission).

:func:`admissible` is the policy, pure: requests join in arrival order (none jumps the queue), while the
batch stays within ``max_batch_size`` rows, the newcomers' prompts within ``max_prefill_tokens`` (a step
that prefills much delays every running row's next token), and the cache, padding counted, within
``max_cached_tokens``. The first waiting request joins an empty batch whatever its size, so no request
waits forever. :class:`Admissions` applies it to a :class:`~distrain.generation.decoding.RunningBatch`
one step at a time, the loop a server drives.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

from distrain.generation.decoding import Request, RunningBatch  # or a SlotBatch: the same contract


@dataclass(frozen=True)
class Limits:
    max_batch_size: int = 32
    max_prefill_tokens: int = 2048
    max_cached_tokens: int | None = None
    #: static batching: no one joins a running batch; the next forms when all its rows have ended
    static: bool = False


def admissible(waiting: Sequence[int], running_rows: int, running_width: int, limits: Limits) -> int:
    """How many of the ``waiting`` prompts (their lengths, in arrival order) join a batch of
    ``running_rows`` rows whose cache is ``running_width`` positions wide."""
    if limits.static and running_rows:
        return 0
    count, prefill, width = 0, 0, running_width
    for length in waiting:
        rows, wider = running_rows + count + 1, max(width, length)
        fits = (rows <= limits.max_batch_size and prefill + length <= limits.max_prefill_tokens
                and (limits.max_cached_tokens is None or rows * wider <= limits.max_cached_tokens))
        if not fits and not (running_rows == 0 and count == 0):
            break
        count, prefill, width = count + 1, prefill + length, wider
    return count


class Admissions:
    """Requests wait in arrival order; each :meth:`step` admits what :func:`admissible` allows, then
    decodes one token for every running row."""

    def __init__(self, batch: RunningBatch, limits: Limits = Limits()) -> None:
        self.batch, self.limits = batch, limits
        self.waiting: deque[Request] = deque()

    def submit(self, request: Request) -> None:
        self.waiting.append(request)

    def cancel(self, request: Request) -> None:
        """Forget a request wherever it is (its client went away)."""
        if request in self.waiting:
            self.waiting.remove(request)
        elif request in self.batch.rows:
            self.batch.cancel(request)

    @property
    def idle(self) -> bool:
        return not self.waiting and not len(self.batch)

    def admissions(self) -> list[Request]:
        """The waiting requests that join before the next step (taken off the queue, not yet admitted)."""
        count = admissible([len(request.prompt) for request in self.waiting], len(self.batch),
                           self.batch.cache_width, self.limits)
        return [self.waiting.popleft() for _ in range(count)]

    def step(self) -> list[Request]:
        """Admit, decode one token for every row; the requests that finished."""
        self.batch.admit(self.admissions())
        return self.batch.step()
