"""Dynamic request batching: a bounded queue and the policy that cuts it into batches. Pure asyncio.

Requests wait in arrival order. Whenever the model is free, one batch is cut: the oldest waiting
request always, then the others closest to it in length, up to ``max_batch_size`` requests, at most
``max_padding`` padding per real token (on a CPU a token costs the same padded or not, so a batch
padded to twice its tokens runs slower than its requests one by one) and, optionally,
``max_batch_tokens`` padded tokens. With
``max_wait_s = 0`` a batch is whatever queued while the previous one ran, so a lone request never
waits; a positive ``max_wait_s`` lets a batch wait that long for company.

A full queue refuses at once (:class:`QueueFull`), a request still waiting at its deadline is
dropped without being computed (:class:`RequestTimedOut`), and a batch that raises is re-run one
item at a time so that only the culprit fails. Nothing here knows about HTTP or models.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence


class QueueFull(Exception):
    """The queue holds ``max_queue`` requests already; the caller should retry later."""


class RequestTimedOut(Exception):
    """The request waited in the queue past its time limit; it was never computed."""


class Draining(Exception):
    """The batcher is shutting down and accepts nothing new."""


@dataclass(eq=False)
class Pending:
    """One queued request: its item, its length (tokens) and when it arrived."""

    item: Any
    length: int
    arrived: float
    future: asyncio.Future = field(repr=False)
    started: float | None = None


def padded_tokens(lengths: Sequence[int]) -> int:
    """What a batch costs once padded: count × longest."""
    return len(lengths) * max(lengths, default=0)


def select_batch(waiting: Sequence[Pending], max_batch_size: int, max_batch_tokens: int | None = None,
                 max_padding: float | None = None) -> list[Pending]:
    """The next batch from ``waiting`` (in arrival order): the oldest request, then those closest
    to it in length (older first among equals), within the size and padded-token caps and with at
    most ``max_padding`` padded tokens per real token.

    The oldest is always taken, even alone over the token cap, so no request starves.
    """
    if not waiting:
        return []
    oldest = waiting[0]
    chosen = [oldest]
    longest = oldest.length
    real = oldest.length
    others = sorted(waiting[1:], key=lambda p: (abs(p.length - oldest.length), p.arrived))
    for candidate in others:
        if len(chosen) >= max_batch_size:
            break
        width = max(longest, candidate.length)
        if max_batch_tokens is not None and width * (len(chosen) + 1) > max_batch_tokens:
            continue  # a shorter one further down the list may still fit
        if max_padding is not None and width * (len(chosen) + 1) > (1 + max_padding) * (real + candidate.length):
            continue
        chosen.append(candidate)
        longest = width
        real += candidate.length
    return chosen


@dataclass
class BatchReport:
    """What one batch did, for metrics: its requests' lengths and queue waits, and its compute time."""

    lengths: list[int]
    queue_waits: list[float]
    seconds: float
    failed_together: bool


class Batcher:
    """Feeds ``run_batch(items) -> results`` (synchronous, one call at a time, on ``executor``'s
    thread) from a bounded queue. ``submit`` awaits one item's result."""

    def __init__(
        self,
        run_batch: Callable[[list[Any]], list[Any]],
        *,
        max_batch_size: int = 32,
        max_batch_tokens: int | None = None,
        max_padding: float | None = None,
        max_wait_s: float = 0.0,
        max_queue: int = 256,
        timeout_s: float | None = 30.0,
        executor: concurrent.futures.Executor | None = None,
        on_batch: Callable[[BatchReport], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_batch_size < 1 or max_queue < 1:
            raise ValueError("max_batch_size and max_queue must be at least 1")
        self.run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.max_batch_tokens = max_batch_tokens
        self.max_padding = max_padding
        self.max_wait_s = max_wait_s
        self.max_queue = max_queue
        self.timeout_s = timeout_s
        self.executor = executor or concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="distrain-model")
        self.on_batch = on_batch
        self.clock = clock
        self.waiting: list[Pending] = []
        #: requests in the batch being computed now
        self.running: list[Pending] = []
        self.closing = False
        self._changed = asyncio.Event()
        self._task: asyncio.Task | None = None

    # ------------------------------------------------------------------------------ callers
    @property
    def depth(self) -> int:
        return len(self.waiting)

    @property
    def idle(self) -> bool:
        return not self.waiting and not self.running

    async def submit(self, item: Any, length: int = 1) -> Any:
        """The result of ``item``; raises what computing it raised, or QueueFull, RequestTimedOut, Draining."""
        if self.closing:
            raise Draining("the server is shutting down")
        if len(self.waiting) >= self.max_queue:
            raise QueueFull(f"the queue is full ({self.max_queue} requests waiting)")
        pending = Pending(item, max(int(length), 0), self.clock(), asyncio.get_running_loop().create_future())
        self.waiting.append(pending)
        self._changed.set()
        try:
            return await asyncio.wait_for(asyncio.shield(pending.future), self.timeout_s)
        except asyncio.TimeoutError:
            if pending.started is not None:  # already being computed: its answer is moments away
                return await pending.future
            self._forget(pending)
            raise RequestTimedOut(f"waited {self.timeout_s:g} s in the queue without being computed") from None
        except asyncio.CancelledError:  # the client went away: never compute it
            if pending.started is None:
                self._forget(pending)
            raise

    def _forget(self, pending: Pending) -> None:
        if pending in self.waiting:
            self.waiting.remove(pending)

    # ------------------------------------------------------------------------------ the loop
    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="distrain-batcher")

    async def close(self) -> None:
        """Refuse new requests, answer everything queued or running, then stop the loop."""
        self.closing = True
        self._changed.set()
        if self._task is not None:
            await self._task

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            while not self.waiting and not self.closing:
                self._changed.clear()
                await self._changed.wait()
            if not self.waiting:  # closing and nothing left
                return
            await self._wait_to_fill()
            self._drop_expired()
            batch = select_batch(self.waiting, self.max_batch_size, self.max_batch_tokens, self.max_padding)
            if not batch:
                continue
            now = self.clock()
            chosen = set(map(id, batch))
            self.waiting = [p for p in self.waiting if id(p) not in chosen]
            for pending in batch:
                pending.started = now
            self.running = batch
            started = time.perf_counter()
            try:
                outcomes, together = await loop.run_in_executor(self.executor, _compute, self.run_batch, [p.item for p in batch])
            except BaseException as error:  # the executor itself failed: answer everyone, then stop
                for pending in batch:
                    if not pending.future.done():
                        pending.future.set_exception(error)
                self.running = []
                raise
            seconds = time.perf_counter() - started
            self.running = []
            for pending, (ok, value) in zip(batch, outcomes):
                if pending.future.done():
                    continue
                if ok:
                    pending.future.set_result(value)
                else:
                    pending.future.set_exception(value)
            if self.on_batch is not None:
                self.on_batch(BatchReport([p.length for p in batch], [now - p.arrived for p in batch], seconds, together))

    async def _wait_to_fill(self) -> None:
        """With ``max_wait_s``, let the batch fill until it is full or its oldest request has waited that long."""
        if self.max_wait_s <= 0:
            return
        while len(self.waiting) < self.max_batch_size and not self.closing and self.waiting:
            remaining = self.waiting[0].arrived + self.max_wait_s - self.clock()
            if remaining <= 0:
                return
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                return

    def _drop_expired(self) -> None:
        """Requests already past their deadline are answered with a timeout, never computed."""
        if self.timeout_s is None:
            return
        now = self.clock()
        keep = []
        for pending in self.waiting:
            if now - pending.arrived >= self.timeout_s:
                if not pending.future.done():
                    pending.future.set_exception(
                        RequestTimedOut(f"waited {self.timeout_s:g} s in the queue without being computed"))
            else:
                keep.append(pending)
        self.waiting = keep


def _compute(run_batch: Callable[[list[Any]], list[Any]], items: list[Any]) -> tuple[list[tuple[bool, Any]], bool]:
    """Run the batch; if it raises, run each item alone so only the culprit fails.
    Returns ``(ok, result or exception)`` per item, and whether the batch had to be split."""
    try:
        results = run_batch(items)
        if len(results) != len(items):
            raise RuntimeError(f"run_batch returned {len(results)} results for {len(items)} items")
        return [(True, result) for result in results], False
    except Exception as error:  # noqa: BLE001 - isolate the culprit below
        if len(items) == 1:
            return [(False, error)], False
    outcomes: list[tuple[bool, Any]] = []
    for item in items:
        try:
            outcomes.append((True, run_batch([item])[0]))
        except Exception as error:  # noqa: BLE001 - this item's own failure, reported to its caller
            outcomes.append((False, error))
    return outcomes, True
