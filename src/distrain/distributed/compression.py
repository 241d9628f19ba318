"""Gradient compression: what every-step gradient averaging sends over the wire, as a DDP communication hook.

A compression is configured as ``"distributed": {"gradient_compression": {"type": ...}}`` and
installed by ``apply_ddp`` on its wrapped model; implementations are in
:mod:`distrain.distributed.compressions` (``fp16``, ``bf16``, ``powersgd``). Each reports the bytes
it sent to a ``moved(bytes)`` callback, which the sync mode counts as ``sync_bytes``. It changes the
gradients (rounding, low-rank approximation), so the update is no longer exactly the
single-process one; it only makes sense with ``sync: every_step`` (local SGD does not send gradients).
"""

from __future__ import annotations

from typing import Any, Callable

from distrain.registry import Registrable


class GradientCompression(Registrable):
    """Base class: :meth:`install` puts the hook on a ``DistributedDataParallel`` module."""

    def install(self, ddp: Any, moved: Callable[[int], None]) -> None:
        raise NotImplementedError
