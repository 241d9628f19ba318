"""The process around the app: bind, load the model in the background, warm up, serve, drain.

The socket is bound (and the port file written) first, so ``/health`` answers and ``/ready`` says
503 while the archive loads and the model warms up. The first SIGTERM or SIGINT starts a drain:
``/ready`` and new predictions answer 503 at once, everything queued or running is answered, then
the server stops and the process exits 0, or 1 if ``drain_timeout_s`` ran out first. A second
signal exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import socket
import sys
import threading
from typing import Any, Callable

from distrain.serving.app import ServeOptions, ServingState, build_app


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        from distrain.errors import UsageError

        raise UsageError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def write_port_file(path: str, port: int) -> None:
    from distrain.job.disk import write_text_atomically

    write_text_atomically(path, f"{port}\n")  # a reader never sees a half-written port


def run_server(
    archive: str,
    load_predictor: Callable[[], Any],
    options: ServeOptions,
    host: str = "127.0.0.1",
    port: int = 8000,
    port_file: str | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> int:
    sock = bind(host, port)
    bound = sock.getsockname()[1]
    if port_file:
        write_port_file(port_file, bound)
    log(f"distrain serve: {archive} on http://{host}:{bound} (loading)")
    return _run_event_loop(_serve(sock, archive, load_predictor, options, log))


def _run_event_loop(coroutine) -> Any:
    """Run on uvloop where it is installed (the serve extra has it): HTTP costs about half as much CPU."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    if not hasattr(asyncio, "Runner"):  # Python 3.10
        uvloop.install()
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)


async def _serve(sock: socket.socket, archive: str, load_predictor, options: ServeOptions, log) -> int:
    import uvicorn

    state = ServingState(archive, options)
    config = uvicorn.Config(build_app(state), lifespan="off", log_level="warning", access_log=False,
                            timeout_graceful_shutdown=max(options.drain_timeout_s, 1.0))
    outcome: dict[str, Any] = {"failure": None, "drain_timed_out": False, "signals": 0}
    server = _server_class()(config)
    loop = asyncio.get_running_loop()

    async def drain() -> None:
        state.phase = "draining"
        try:
            await asyncio.wait_for(_finish(state), options.drain_timeout_s)
            log("distrain serve: drained, every accepted request answered; exiting")
        except asyncio.TimeoutError:
            outcome["drain_timed_out"] = True
            log(f"distrain serve: drain timed out after {options.drain_timeout_s:g} s with requests unanswered")
            server.force_exit = True
        else:
            await _stop_accepting(sock, server.server_state.connections, config.timeout_keep_alive, log)
        server.should_exit = True

    def on_signal(signum: int) -> None:
        outcome["signals"] += 1
        if outcome["signals"] > 1:
            log("distrain serve: second signal, exiting at once")
            os._exit(1)
        log(f"distrain serve: {signal.Signals(signum).name}, draining (a second signal exits at once)")
        loop.create_task(drain())

    server.on_signal = on_signal

    async def load() -> None:
        try:
            predictor = await _in_daemon_thread(load_predictor)
            state.predictor = predictor
            if state.phase == "draining":
                return
            state.phase = "warming up"
            if predictor.generates:
                log(f"distrain serve: the model computes on {_set_torch_threads(state.options.torch_threads)} thread(s)")
                state.engine = _make_engine(state, predictor)
                state.engine.start()
                await _warm_up(state.engine, predictor)
            else:
                state.batcher = _make_batcher(state, predictor)
                state.batcher.start()
                record = predictor.warm_up_record()
                if record is not None:
                    await state.batcher.submit(predictor.prepare(record), 1)
            if state.phase != "draining":
                state.phase = "ready"
                log("distrain serve: ready")
        except Exception as error:  # noqa: BLE001 - reported by the command after the server stops
            outcome["failure"] = error
            server.should_exit = True

    loader = loop.create_task(load())
    await server.serve(sockets=[sock])
    if not loader.done():
        loader.cancel()
    if outcome["failure"] is not None:
        raise outcome["failure"]
    return 1 if outcome["drain_timed_out"] else 0


async def _stop_accepting(sock: socket.socket, connections: set, idle_timeout_s: float, log) -> None:
    """Refuse new connections without resetting any: closing a listening socket resets every
    connection still in its accept queue, which a client sees as ``ConnectionResetError`` on a
    request that was never read. So first the kernel drops new handshakes (a filter that drops every
    packet the listening socket would receive: such a client retries its SYN and then finds the port
    closed), then the event loop accepts what is queued and answers it 503, and only then the socket
    closes. Every answer in the drain says ``Connection: close``, so the open ``connections`` end once
    answered: waiting for them (not a fixed pause) keeps a busy machine from closing one whose request
    is not read yet. Both must stay empty for a moment, because a connection the loop has just
    accepted joins ``connections`` one loop turn later. A kept-alive client that holds a connection
    without sending is closed after ``idle_timeout_s``, the time the server would close it anyway."""
    if not _drop_new_connections(sock):
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + idle_timeout_s
    settle_s = 0.05
    empty_since = None
    while loop.time() < deadline:
        if _accept_queue_length(sock) or connections:
            empty_since = None
        elif empty_since is None:
            empty_since = loop.time()
        elif loop.time() - empty_since >= settle_s:
            return
        await asyncio.sleep(0.005)
    log(f"distrain serve: closing {len(connections)} connection(s) that sent nothing for {idle_timeout_s:g} s")


#: classic BPF over the TCP header: a packet with the SYN flag is dropped, any other is kept
_DROP_SYN = ((0x30, 0, 0, 13),           # BPF_LD | BPF_B | BPF_ABS: the flags byte
             (0x45, 0, 1, 0x02),         # BPF_JMP | BPF_JSET | BPF_K: SYN set? next : skip one
             (0x06, 0, 0, 0),            # BPF_RET | BPF_K: keep 0 bytes (drop)
             (0x06, 0, 0, 0xFFFFFFFF))   # BPF_RET | BPF_K: keep the whole packet


def _drop_new_connections(sock: socket.socket) -> bool:
    """Make the listening socket drop SYNs, so no new handshake starts; False where the platform has
    no socket filters (then the socket just closes). Only SYNs: a handshake the kernel had begun
    before the filter still needs its client's last ACK, which also passes the listener's filter, and
    dropping it would leave a client that believes it is connected to a request that is then reset."""
    import ctypes
    import struct

    attach_filter = getattr(socket, "SO_ATTACH_FILTER", 26 if sys.platform.startswith("linux") else None)
    if attach_filter is None:
        return False
    program = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *step) for step in _DROP_SYN))
    try:
        sock.setsockopt(socket.SOL_SOCKET, attach_filter, struct.pack("HL", len(_DROP_SYN), ctypes.addressof(program)))
    except OSError:
        return False
    return True


def _accept_queue_length(sock: socket.socket) -> int:
    """Connections waiting in a listening socket's accept queue (Linux's ``tcpi_unacked`` for a listener)."""
    import struct

    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    except (OSError, AttributeError):
        return 0
    return struct.unpack_from("I", info, 24)[0] if len(info) >= 28 else 0


async def _finish(state: ServingState) -> None:
    if state.batcher is not None:
        await state.batcher.close()
    if state.engine is not None:
        await state.engine.close()  # every accepted generation runs to its end (or its client leaves)
        state.predictor.close()  # the engine thread has stopped: the other ranks of a split model may leave
    await state.idle.wait()


def _make_batcher(state: ServingState, predictor: Any):
    from distrain.serving.batcher import Batcher

    options = state.options
    return Batcher(
        predictor.predict,
        max_batch_size=options.max_batch_size,
        max_batch_tokens=options.max_batch_tokens,
        max_padding=options.max_padding,
        max_wait_s=options.max_wait_ms / 1000.0,
        max_queue=options.max_queue,
        timeout_s=options.request_timeout_s,
        on_batch=state.metrics.observe_batch,
    )


def _set_torch_threads(threads: int | None) -> int:
    """torch's intra-op threads for the engine: by default one core is left to the event loop. With as many
    threads as cores, each decode step's threads wait for the core the event loop holds: on the 2-core
    machine, loaded by other processes, 32 streaming clients of a 41 M-parameter Llama got 44 and 32
    tokens/s with 2 threads, 200 and 109 with 1."""
    import torch

    if threads is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        threads = max(1, cores - 1)
    torch.set_num_threads(threads)
    return threads


def _make_engine(state: ServingState, predictor: Any):
    from distrain.generation.admission import Limits
    from distrain.generation.decode_attention import CHOICES
    from distrain.serving.generation_engine import GenerationEngine

    options = state.options
    limits = Limits(options.max_batch_size, options.max_prefill_tokens, options.max_cached_tokens, options.static_batching)
    make_batch = functools.partial(predictor.make_batch, max_prefill_tokens=options.max_prefill_tokens,
                                   compiled_attention=CHOICES[options.decode_attention])
    return GenerationEngine(make_batch, limits, max_queue=options.max_queue,
                            timeout_s=options.request_timeout_s, on_step=state.metrics.observe_step,
                            on_token=state.metrics.observe_token, on_cancel=lambda stream, reason: state.metrics.cancelled.labels(reason).inc())


async def _warm_up(engine: Any, predictor: Any) -> None:
    """One short generation, so the first client does not pay for the first forward passes."""
    from distrain.generation.decoding import GenerationSettings, Request

    async for event in engine.submit(Request(predictor.prompt_ids("warm up"), GenerationSettings(max_new_tokens=2))):
        if event.error is not None:
            raise event.error
        if event.finish_reason is not None:
            break


async def _in_daemon_thread(function: Callable[[], Any]) -> Any:
    """``function()`` on a daemon thread, so a signal during a long load does not wait for it."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def target() -> None:
        try:
            result = function()
        except BaseException as error:  # noqa: BLE001 - handed to the awaiting task
            # bound now: Python unbinds ``error`` when the except clause ends, before the loop runs the callback
            loop.call_soon_threadsafe(lambda failure=error: future.done() or future.set_exception(failure))
        else:
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(result))

    threading.Thread(target=target, name="distrain-load", daemon=True).start()
    return await future


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server with our signal handling: a signal starts a drain instead of closing the socket."""

        on_signal: Callable[[int], None] = staticmethod(lambda signum: None)

        @contextlib.contextmanager
        def capture_signals(self):
            loop = asyncio.get_running_loop()
            signals = (signal.SIGTERM, signal.SIGINT)
            for signum in signals:
                loop.add_signal_handler(signum, self.on_signal, signum)
            try:
                yield
            finally:
                for signum in signals:
                    loop.remove_signal_handler(signum)

    return Server
