"""What applying the parallelisms hands the handle: a strategy's :class:`Applied` and step 1's :class:`Split`.

A strategy's :meth:`~distrain.distributed.strategy.ParallelStrategy.apply` says everything the
:class:`~distrain.distributed.parallel_model.ParallelModel` needs to step the model it wrapped: what forward
runs on, how the ranks hold its state, how accumulation micro-steps defer gradient synchronisation, how
gradients are clipped, and any averaging of its own before the optimizer step. The defaults are those of a
model every rank holds whole and nothing synchronises, so a strategy names only what it changes. A model split
by tensor or pipeline parallelism (:class:`Split`) is held and clipped as split, whatever wraps it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, ContextManager

import torch

from distrain.distributed.model_state import WHOLE, Holding

#: clip the gradients of these parameters by their global norm to at most this; return the norm before
Clip = Callable[[list[torch.nn.Parameter], float], torch.Tensor]


def clip_whole_grad_norm(parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """Clip by the norm of this rank's gradients (every rank holds the whole model, its gradients averaged)."""
    parameters = [parameter for parameter in parameters if parameter.grad is not None]
    if any(parameter.grad.is_sparse for parameter in parameters):
        return clip_sparse_grad_norm(parameters, max_norm)
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm)


@dataclass
class Applied:
    """``module``: what forward is called on (the strategy's wrapper, or the model itself). ``holding``: how
    the ranks hold the model's state. ``no_sync``: a context in which backward does not synchronise gradients
    yet (an accumulation micro-step). ``clip_grad_norm``: clipping by the whole model's gradient norm.
    ``reduce_gradients``: called with the model's parameters once backward is done for an optimizer step and
    before the sync mode and the optimizer see them (a strategy that averages gradients itself, after
    backward); None: backward already did (or nothing needs to)."""

    module: torch.nn.Module
    holding: Holding = WHOLE
    no_sync: Callable[[], ContextManager[None]] = contextlib.nullcontext
    clip_grad_norm: Clip = clip_whole_grad_norm
    reduce_gradients: Callable[[list[torch.nn.Parameter]], None] | None = None


@dataclass
class Split:
    """How step 1 split the model: ``described`` in lines for ``distrain check`` (tensor-parallel layers,
    pipeline stages); a split model's ``holding`` and ``clip_grad_norm`` (None: not split, the strategy's stand)."""

    described: list[str] = field(default_factory=list)
    holding: Holding | None = None
    clip_grad_norm: Clip | None = None


def clip_sparse_grad_norm(parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
    """torch's ``clip_grad_norm_`` cannot take the norm of sparse gradients (``sparse: true`` embeddings,
    AllenNLP's ``dense_sparse_adam``): as AllenNLP did, a sparse gradient counts by its coalesced values."""
    norms = [(parameter.grad.coalesce()._values() if parameter.grad.is_sparse else parameter.grad).detach().norm(2)
             for parameter in parameters]
    total = torch.stack(norms).norm(2) if norms else torch.tensor(0.0)
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for parameter in parameters:
        if parameter.grad.is_sparse:
            parameter.grad = parameter.grad.coalesce() * scale
        else:
            parameter.grad.detach().mul_(scale)
    return total
