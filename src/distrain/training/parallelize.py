"""The model as a worker trains it: the parallelisms applied in one fixed, visible order.

1. the split (:class:`~distrain.distributed.model_split.ModelSplit`): tensor parallelism or pipeline
   stages where the layout asks for them (:mod:`distrain.distributed.tensor_parallel`,
   :mod:`distrain.distributed.pipeline`).
2. ``trainer.param_dtype`` other than float32: each module runs on copies of its parameters in that dtype,
   cast when it is called (:func:`~distrain.training.amp.cast_parameters`); the parameters stay the
   float32 master weights. Before checkpointing, so a recomputation casts again.
3. activation checkpointing (``trainer.activation_checkpointing``): the chosen modules recompute their
   activations in backward. It patches their ``forward`` and keeps every name, so the FSDP units below
   still find their modules.
4. the strategy's ``wrap``: sharded (``fsdp``) or replicated (``ddp``) over the data-parallel ranks.
5. ``torch.compile`` (``trainer.compile``) of the wrapped model. Compiling the wrapped module (not each
   block before sharding, as torchtitan does) is what the compile equivalence tests and
   ``bench_scaling.py --compile`` measured.

The trainer calls :func:`parallelize` once and trains what it returns; nothing else applies a parallelism.
"""

from __future__ import annotations

import logging

import torch

from distrain.distributed.strategy import ParallelStrategy
from distrain.training.activations import ActivationCheckpointing, apply_activation_checkpointing
from distrain.training.amp import ParamDtype, cast_parameters

logger = logging.getLogger(__name__)


def parallelize(model: torch.nn.Module, strategy: ParallelStrategy,
                activation_checkpointing: ActivationCheckpointing | None, compile: bool,
                device: torch.device, param_dtype: ParamDtype = "float32") -> torch.nn.Module:
    """Split ``model``, cast its parameters for forward, checkpoint its activations, shard or replicate it
    and compile it, in that order; return the module to call forward on."""
    strategy.split.apply(model)
    cast_parameters(model, param_dtype)
    if activation_checkpointing is not None:
        apply_activation_checkpointing(model, activation_checkpointing.modules)
    wrapped = strategy.wrap(model)
    if compile:
        wrapped = compiled(wrapped, device)
    return wrapped


def compiled(module: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """``torch.compile`` of the wrapped model (metric updates stay eager, see ``Metric``); a clear
    error where the compiler cannot work here. Random ops (dropout) draw from eager's generator
    (inductor's ``fallback_random``), so a compiled run makes the eager run's updates and resumes exactly."""
    import importlib.util
    import shutil

    from distrain.config.errors import ConfigError, Problem

    if device.type == "cpu" and not any(shutil.which(name) for name in ("g++", "clang++", "c++")):
        raise ConfigError([Problem("trainer.compile", "torch.compile on the CPU needs a C++ compiler "
                                   "(g++ or clang++) on the PATH; install one or leave compile off")])
    if device.type == "cuda" and importlib.util.find_spec("triton") is None:
        raise ConfigError([Problem("trainer.compile", "torch.compile on CUDA needs the triton package")])
    import torch._inductor.config

    from distrain.compat.deferred_compiler import disable_deferred

    disable_deferred()
    torch._inductor.config.fallback_random = True
    logger.info("compiling the model with torch.compile (the first steps include compilation)")
    return torch.compile(module)
