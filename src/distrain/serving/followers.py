"""``distrain serve --tensor-parallel N``: the model split over N local processes with its training plan.

Rank 0 is the server. Its engine thread drives a :class:`MirroredBatch`: every change to the running batch
(a fresh batch, prompts admitted, the tokens chosen, rows dropped) is broadcast to the other ranks before
rank 0 makes it, and each of them (:func:`follow`) makes the same change to its own batch over its shard
of the model, so every forward pass runs on all ranks together with the same inputs, as tensor
parallelism needs. Tokens are chosen on rank 0 only and sent with the step, so the ranks can never
disagree, sampled rows included. The other ranks leave when the server says ``stop``, or dies.
"""

from __future__ import annotations

import datetime
import multiprocessing
import os
import signal
from typing import Any

from distrain.generation.decoding import Request, RunningBatch, batch_class

#: collectives wait this long: between requests an idle server sends nothing, and that is no failure
IDLE = datetime.timedelta(days=365)
#: how long rank 0 waits for the others to load the archive and join
RENDEZVOUS = datetime.timedelta(minutes=10)


def _send(command: tuple) -> None:
    import torch.distributed as dist

    dist.broadcast_object_list([command], src=0)


def _receive() -> tuple:
    import torch.distributed as dist

    box: list[Any] = [None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


class Mirrored:
    """Rank 0's running batch: each change is sent to the other ranks before it is made here. Mixed into
    either running batch (:func:`mirrored`): both keep rows the same way, so a change is the same call."""

    def __init__(self, *arguments: Any, **options: Any) -> None:
        _send(("reset", options))
        super().__init__(*arguments, **options)

    def admit(self, requests) -> None:
        if requests:
            _send(("admit", [(request.prompt, request.settings, request.number) for request in requests]))
        super().admit(requests)

    def advance(self, chosen: list[int], on_taken=None) -> list[Request]:
        _send(("advance", chosen))
        return super().advance(chosen, on_taken)

    def cancel(self, request: Request) -> None:
        rows = [row for row, other in enumerate(self.rows) if other is not request]
        _send(("keep", rows))
        self._keep(rows)


class MirroredBatch(Mirrored, RunningBatch):
    """The padded running batch, mirrored."""


def mirrored(kind: type) -> type:
    """``kind`` (a running batch class) with each change sent to the other ranks first."""
    if kind is RunningBatch:
        return MirroredBatch
    return type(f"Mirrored{kind.__name__}", (Mirrored, kind), {"__doc__": f"{kind.__name__}, mirrored."})


def follow(make_batch) -> None:
    """A rank other than 0: make each change rank 0 sends to a batch of its own, until ``stop``."""
    batch = None
    while True:
        try:
            kind, *arguments = _receive()
        except RuntimeError:  # the server is gone (its connection closed): nothing left to follow
            return
        if kind == "stop":
            return
        try:
            if kind == "reset":  # with rank 0's options (the prefill budget), so both chunk prompts alike
                batch = make_batch(**arguments[0])
            elif kind == "admit":
                batch.admit([Request(prompt, settings, number) for prompt, settings, number in arguments[0]])
            elif kind == "advance":
                batch.advance(arguments[0])
                batch.take_refused()  # rank 0 answers for them
            elif kind == "keep":
                batch._keep(arguments[0])
        except Exception:  # noqa: BLE001 - rank 0 met the same failure on the same inputs and answers for it
            pass


class Followers:
    """Ranks 1..N-1, started from rank 0 (the server), which joins them in a gloo group."""

    def __init__(self, size: int, archive: str, overrides: dict[str, Any], include_packages: list[str],
                 dtype: str | None = None) -> None:
        import torch.distributed as dist

        self.size = size
        store = dist.TCPStore("127.0.0.1", 0, size, is_master=True, wait_for_workers=False, timeout=RENDEZVOUS)
        context = multiprocessing.get_context("spawn")
        self.processes = [
            context.Process(target=_follower_main, name=f"distrain-serve-rank{rank}", daemon=True,
                            args=(rank, size, store.port, archive, overrides, list(include_packages), dtype))
            for rank in range(1, size)
        ]
        for process in self.processes:
            process.start()
        self._store = store  # kept: the others rendezvous through it
        self.joined = False

    def join(self, model: Any) -> None:
        """Join the group as rank 0 (once every other rank has loaded the archive) and split ``model``."""
        import torch.distributed as dist

        dist.init_process_group("gloo", store=self._store, rank=0, world_size=self.size, timeout=IDLE)
        self.joined = True
        split(model, 0, self.size)

    def stop(self) -> None:
        """Tell the others to leave (the engine thread has stopped), then wait for them briefly."""
        import torch.distributed as dist

        if self.joined:
            self.joined = False
            try:
                _send(("stop",))
                dist.destroy_process_group()
            except RuntimeError:  # a rank already gone: nothing to tell it
                pass
        for process in self.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()


def split(model: Any, rank: int, size: int) -> None:
    """Split ``model`` over the ``size`` ranks with its tensor-parallel plan, as training splits it."""
    from distrain.distributed.config import make_world
    from distrain.experiment.archive.jobs import place_model, tensor_parallel_config

    distributed = tensor_parallel_config(size)
    place_model(make_world(rank, size, rank, size, -1, distributed), model, distributed)


def _follower_main(rank: int, size: int, port: int, archive: str, overrides: dict[str, Any],
                   include_packages: list[str], dtype: str | None = None) -> None:
    # a terminal's Ctrl-C or a process-group SIGTERM reaches every rank; the server drains and then tells us
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, signal.SIG_IGN)
    _die_with_parent()
    import torch
    import torch.distributed as dist

    from distrain.experiment.archive.jobs import load_for_inference
    from distrain.plugins import import_plugins
    from distrain.pretrained import load_tokenizer
    from distrain.runtime.worker_process import cpu_threads_per_worker

    torch.set_num_threads(cpu_threads_per_worker(size))
    import_plugins(include_packages)
    from distrain.serving.dtype import cast_model

    model = cast_model(load_for_inference(archive, overrides)[0].model.eval(), dtype)  # as the server's Predictor
    ends, pad = model.end_and_pad_ids(load_tokenizer(model.tokenizer_name))
    store = dist.TCPStore("127.0.0.1", port, size, is_master=False, timeout=RENDEZVOUS)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=size, timeout=IDLE)
    split(model, rank, size)
    follow(lambda **options: batch_class()(model.transformer, ends, pad, model.context_length(), **options))


def _die_with_parent() -> None:
    """Leave when the server dies, however it dies: a follower would otherwise wait on it forever. (Not
    ``PR_SET_PDEATHSIG``: that fires when the thread that started us ends, and the server loads the model,
    and so starts us, on a thread that ends once it is loaded.)"""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="distrain-watch-server", daemon=True).start()
