"""Activation checkpointing, the one wrapping: a module recomputes its activations in backward instead of keeping
them (:func:`checkpoint_forward`). The trainer's ``activation_checkpointing`` and a model's own blocks (AllenNLP's
``checkpoint_wrapper`` model argument, e.g. ``t5``'s, declared by
:meth:`~distrain.models.model.Model.activation_checkpoint_units`) are both applied through it by
:func:`~distrain.training.parallelize.parallelize`.

Both of AllenNLP's kinds are here, each one flag over the same wrapping: ``torch`` (``torch.utils.checkpoint``)
and ``fairscale`` (fairscale's ``checkpoint_wrapper``, whose ``offload_to_cpu``, its default, keeps the blocks'
checkpointed inputs in host memory). Here both run torch's non-reentrant checkpoint, which replays the random state
in the recomputation, so gradients are bit-identical to a plain run. ``offload_to_cpu`` keeps the tensors saved
for backward in pinned host memory when the block runs on a CUDA device; on the CPU they are in host memory
already and it changes nothing.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import torch

from distrain.registry import Registrable


class CheckpointWrapper(Registrable):
    """Makes a module recompute its activations in backward; its name and state dict are unchanged."""

    default_implementation = "torch"

    def __init__(self, offload_to_cpu: bool = False) -> None:
        self.offload_to_cpu = offload_to_cpu

    def wrap_module(self, module: torch.nn.Module) -> torch.nn.Module:
        """``module``, checkpointed (AllenNLP's call; distrain's models declare their blocks instead)."""
        return checkpoint_forward(module, self.offload_to_cpu)


CheckpointWrapper.register("torch")(CheckpointWrapper)


@CheckpointWrapper.register("fairscale")
class FairscaleCheckpointWrapper(CheckpointWrapper):
    """AllenNLP's ``fairscale`` kind: ``offload_to_cpu`` on unless turned off, as fairscale's wrapper had it."""

    def __init__(self, offload_to_cpu: bool = True) -> None:
        super().__init__(offload_to_cpu)


def checkpoint_forward(module: torch.nn.Module, offload_to_cpu: bool = False) -> torch.nn.Module:
    """``module``, its ``forward`` replaced on the instance by a non-reentrant ``torch.utils.checkpoint`` call while
    gradients are on: module names, state dicts and sharding units are unchanged, and the random state is replayed
    in the recomputation, so gradients are bit-identical to a plain run. ``offload_to_cpu``: the tensors it saves
    for backward go to pinned host memory when it runs on a CUDA device."""
    module.forward = functools.partial(_checkpointed, module.forward, offload_to_cpu)
    return module


def _checkpointed(forward: Any, offload_to_cpu: bool, *args: Any, **kwargs: Any) -> Any:
    from torch.utils.checkpoint import checkpoint

    if not torch.is_grad_enabled():
        return forward(*args, **kwargs)
    on_cuda = any(isinstance(value, torch.Tensor) and value.is_cuda for value in (*args, *kwargs.values()))
    offloaded = torch.autograd.graph.save_on_cpu(pin_memory=True) if offload_to_cpu and on_cuda else None
    with offloaded or contextlib.nullcontext():
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)
