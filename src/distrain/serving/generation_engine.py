"""Continuous batching behind the server: one thread decodes, every request reads its own stream of tokens.

The torch work runs on a dedicated thread (never on the event loop) that drives a
:class:`~distrain.generation.admission.Admissions`: before each decode step the requests that arrived
join the running batch (as far as its limits allow), requests whose clients went away leave it, and
every running row takes one token. After each step the thread hands the step's tokens to the event
loop in one ``call_soon_threadsafe`` call; there each request's :class:`TokenStream` receives them.

On the event loop side the engine keeps the admission promises: a bounded number of requests may
wait for a place in the batch (beyond it :class:`~distrain.serving.batcher.QueueFull`, at once), a
request still waiting at its deadline is dropped without being computed
(:class:`~distrain.serving.batcher.RequestTimedOut`), and :meth:`GenerationEngine.close` refuses new
requests (:class:`~distrain.serving.batcher.Draining`) and returns when every accepted one has ended.
Nothing here knows about HTTP.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from distrain.serving.batcher import Draining, QueueFull, RequestTimedOut


@dataclass(frozen=True)
class TokenEvent:
    """One new token (``finish_reason`` set on the last one), or the failure that ended the request."""

    token: int | None
    finish_reason: str | None = None
    error: BaseException | None = None


class TokenStream:
    """The tokens of one request as they are decoded. ``async for event in stream``, on the event loop:
    the iteration ends after the last token (its ``finish_reason`` set), an error, or a cancel."""

    def __init__(self, request: Any, deadline: float | None) -> None:
        self.request = request
        self.deadline = deadline  # when the first token must have come (monotonic), or None
        self.submitted = time.perf_counter()
        self.first_token_at: float | None = None
        self.last_token_at: float | None = None
        self.finished = False
        self.finish_reason: str | None = None
        self._events: asyncio.Queue[TokenEvent | None] = asyncio.Queue()  # None: the end

    @property
    def started(self) -> bool:
        return self.first_token_at is not None

    def __aiter__(self) -> TokenStream:
        return self

    async def __anext__(self) -> TokenEvent:
        if self.deadline is not None and not self.started and self._events.empty():
            remaining = self.deadline - time.monotonic()
            try:
                event = await asyncio.wait_for(self._events.get(), max(remaining, 0.0))
            except asyncio.TimeoutError:
                raise RequestTimedOut("waited in the queue past the request timeout without being computed") from None
        else:
            event = await self._events.get()
        if event is None:  # ended: nothing more will come
            self._events.put_nowait(None)
            raise StopAsyncIteration
        return event

    def _push(self, event: TokenEvent | None) -> None:
        self._events.put_nowait(event)


class GenerationEngine:
    """``submit`` a prompt (token ids) and iterate the :class:`TokenStream` it returns; ``cancel`` it
    if its client goes away. ``make_batch()`` builds an empty
    running batch over the model (a :class:`~distrain.generation.slot_batch.SlotBatch` or a
    :class:`~distrain.generation.decoding.RunningBatch`: the same contract)."""

    def __init__(
        self,
        make_batch: Callable[[], Any],
        limits: Any,
        max_queue: int = 256,
        timeout_s: float | None = 30.0,
        on_step: Callable[[int, int, int], None] | None = None,
        on_token: Callable[[TokenStream, float], None] | None = None,
        on_cancel: Callable[[TokenStream, str], None] | None = None,
    ) -> None:
        from distrain.generation.admission import Admissions

        self._make_batch = make_batch
        self.admissions = Admissions(make_batch(), limits)
        self.max_queue, self.timeout_s = max_queue, timeout_s
        self.on_step = on_step  # (running rows, cached tokens, tokens this step), on the engine thread
        self.on_token = on_token  # (stream, now), on the event loop, for every token delivered
        self.on_cancel = on_cancel  # (stream, reason), on the event loop, for a request cancelled before its end
        # shared with the engine thread, under the condition's lock
        self._wake = threading.Condition()
        self._arrived: list[TokenStream] = []
        self._cancelled: list[TokenStream] = []
        self._stopping = False
        # the event loop's own
        self.closing = False
        self.waiting: set[TokenStream] = set()  # accepted, no token yet
        self.active: set[TokenStream] = set()  # accepted, not finished
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._all_ended: asyncio.Event | None = None
        self.failure: BaseException | None = None  # an error that stopped the engine thread itself

    # ---------------------------------------------------------------------------- event loop
    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._all_ended = asyncio.Event()
        self._all_ended.set()
        self._thread = threading.Thread(target=self._run, name="distrain-generation", daemon=True)
        self._thread.start()

    @property
    def depth(self) -> int:
        """Requests accepted and still waiting for their first token."""
        return len(self.waiting)

    def submit(self, request: Any) -> TokenStream:
        """Queue ``request`` (a :class:`~distrain.generation.decoding.Request`); its stream of tokens."""
        if self.closing:
            raise Draining("the server is shutting down")
        if self.failure is not None:
            raise RuntimeError(f"the generation engine stopped: {self.failure}")
        if len(self.waiting) >= self.max_queue:
            raise QueueFull(f"the queue is full ({self.max_queue} requests waiting)")
        deadline = time.monotonic() + self.timeout_s if self.timeout_s is not None else None
        stream = TokenStream(request, deadline)
        self.waiting.add(stream)
        self.active.add(stream)
        self._all_ended.clear()
        with self._wake:
            self._arrived.append(stream)
            self._wake.notify()
        return stream

    def cancel(self, stream: TokenStream, reason: str = "disconnected") -> None:
        """End ``stream`` before its end token or budget (``reason``: its client went away, its deadline
        passed, a stop string ended it): its row leaves the batch before the next step. A stream that
        already ended is left alone."""
        if stream.finished:
            return
        self._end(stream, "cancelled")
        if self.on_cancel is not None:
            self.on_cancel(stream, reason)
        with self._wake:
            self._cancelled.append(stream)
            self._wake.notify()

    async def close(self) -> None:
        """Refuse new requests, let every accepted one end, then stop the engine thread."""
        self.closing = True
        await self._all_ended.wait()
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._thread.join)

    def _end(self, stream: TokenStream, reason: str) -> None:
        stream.finished, stream.finish_reason = True, reason
        stream._push(None)  # its iteration ends after the events already queued
        self.waiting.discard(stream)
        self.active.discard(stream)
        if not self.active:
            self._all_ended.set()

    def _deliver(self, events: list[tuple[TokenStream, TokenEvent]]) -> None:
        now = time.perf_counter()
        for stream, event in events:
            if stream.finished:  # cancelled while the step ran: its tokens go nowhere
                continue
            if event.token is not None:
                if self.on_token is not None:
                    self.on_token(stream, now)
                if stream.first_token_at is None:
                    stream.first_token_at = now
                    self.waiting.discard(stream)
                stream.last_token_at = now
            stream._push(event)
            if event.finish_reason is not None or event.error is not None:
                self._end(stream, event.finish_reason or "error")

    # ---------------------------------------------------------------------------- the thread
    def _run(self) -> None:
        streams: dict[int, TokenStream] = {}  # id(request) -> its stream, for requests the admissions hold
        admissions = self.admissions
        try:
            while True:
                with self._wake:
                    while not self._arrived and not self._cancelled and admissions.idle and not self._stopping:
                        self._wake.wait()
                    if self._stopping and not self._arrived and admissions.idle:
                        return
                    arrived, cancelled = self._arrived, self._cancelled
                    self._arrived, self._cancelled = [], []
                for stream in arrived:
                    streams[id(stream.request)] = stream
                    admissions.submit(stream.request)
                for stream in cancelled:
                    if streams.pop(id(stream.request), None) is not None:
                        admissions.cancel(stream.request)
                if admissions.idle:
                    if cancelled and self.on_step is not None:
                        self.on_step(0, 0, 0)
                    continue
                self._admit(admissions.admissions(), streams)
                if not len(admissions.batch):
                    continue
                handed = []  # the tokens go to their streams before the pass that feeds them back
                try:
                    admissions.batch.step(lambda finished: handed.append(self._hand_over(streams, finished)))
                except Exception as error:  # noqa: BLE001 - the model failed: fail the rows it held, keep serving
                    self._fail_running(streams, error)
                    continue
                for request, error in admissions.batch.take_refused():  # a prompt the model failed on, alone
                    self._fail(streams, [request], error)
                if self.on_step is not None:
                    self.on_step(len(admissions.batch), admissions.batch.cached_tokens, sum(handed))
        except BaseException as error:  # noqa: BLE001 - answer everyone rather than leave them waiting
            self.failure = error
            self._loop.call_soon_threadsafe(self._deliver, [(s, TokenEvent(None, error=error)) for s in streams.values()])
            raise

    def _hand_over(self, streams: dict[int, TokenStream], finished: list) -> int:
        """Send each running row's newest token (and each finished row's last) to its stream; how many."""
        events = []
        for request in [*self.admissions.batch.rows, *finished]:
            if not request.tokens:  # its prompt is still being read (a slot batch reads it with a step)
                continue
            stream = streams[id(request)] if request.finish_reason is None else streams.pop(id(request))
            events.append((stream, TokenEvent(request.tokens[-1], request.finish_reason)))
        self._loop.call_soon_threadsafe(self._deliver, events)
        return len(events)

    def _admit(self, newcomers: list, streams: dict[int, TokenStream]) -> None:
        """Admit ``newcomers`` together; if that raises, one at a time, so only a prompt the model fails on is
        answered with the error (the running rows are untouched: a padded batch's newcomers join only once
        prefilled; a slot batch reads them with its next step and lists those it fails on in ``take_refused``)."""
        if not newcomers:
            return
        try:
            self.admissions.batch.admit(newcomers)
            return
        except Exception as error:  # noqa: BLE001 - isolated below
            if len(newcomers) == 1:
                self._fail(streams, newcomers, error)
                return
        for request in newcomers:
            try:
                self.admissions.batch.admit([request])
            except Exception as error:  # noqa: BLE001 - this prompt's own failure
                self._fail(streams, [request], error)

    def _fail_running(self, streams: dict[int, TokenStream], error: Exception) -> None:
        """A decode step failed: every running row gets ``error`` and the batch starts empty again, so the
        requests still waiting are unaffected."""
        rows = list(self.admissions.batch.rows)
        self.admissions.batch = self._make_batch()
        if self.on_step is not None:
            self.on_step(0, 0, 0)
        self._fail(streams, rows, error)

    def _fail(self, streams: dict[int, TokenStream], requests: list, error: Exception) -> None:
        failed = [streams.pop(id(request)) for request in requests if id(request) in streams]
        self._loop.call_soon_threadsafe(self._deliver, [(s, TokenEvent(None, error=error)) for s in failed])
