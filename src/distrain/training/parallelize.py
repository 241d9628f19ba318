"""The model as a worker trains it: the parallelisms applied in one fixed, visible order, over one mesh.

:func:`parallelize` is the whole story of what happens to the model; each step is a function of the
model, the job's device mesh (:meth:`~distrain.distributed.parallel_dims.ParallelDims.build_mesh`, the
only one: every parallelism takes its dimensions from it by name) and its options:

1. the split: :func:`~distrain.distributed.tensor_parallel.apply_tensor_parallel` (the planned linears over
   ``tp``) or :func:`~distrain.distributed.pipeline.apply_pipeline` (this rank's stage of ``pp``).
2. ``trainer.param_dtype`` other than float32: each module runs on copies of its parameters in that dtype,
   cast when it is called (:func:`~distrain.training.amp.cast_parameters`); the parameters stay the
   float32 master weights. Before checkpointing, so a recomputation casts again.
3. activation checkpointing (``trainer.activation_checkpointing``, and the blocks the model declares,
   :meth:`~distrain.models.model.Model.activation_checkpoint_units`): the chosen modules recompute their
   activations in backward. It patches their ``forward`` and keeps every name, so the FSDP units below
   still find their modules.
4. the strategy's :meth:`~distrain.distributed.strategy.ParallelStrategy.apply` over the mesh: ``fsdp``'s
   :func:`~distrain.distributed.strategies.fsdp.apply_fsdp` (shard over ``dp_replicate x dp_shard``),
   ``ddp``'s :func:`~distrain.distributed.strategies.ddp.apply_ddp` (replicate; a split model's gradients
   are averaged over ``dp_replicate`` after backward instead), or a plugin's own wrapping. It hands back
   the module to run and how to step it (:class:`~distrain.distributed.applied.Applied`).
5. :func:`apply_compile`: ``torch.compile`` (``trainer.compile``) of the wrapped model. Compiling the wrapped
   module (not each block before sharding, as torchtitan does) is what the compile equivalence tests and
   ``bench_scaling.py --compile`` measured.

The trainer calls :func:`parallelize` once and steps through the :class:`ParallelModel` it returns, which
composes what steps 1 and 4 handed back; nothing else applies a parallelism.
"""

from __future__ import annotations

import dataclasses
import logging
from functools import partial

import torch

from distrain.distributed.applied import Split
from distrain.distributed.collectives import set_reporting
from distrain.distributed.model_state import GATHERED, STAGES
from distrain.distributed.parallel_model import ParallelModel
from distrain.distributed.pipeline import apply_pipeline, clip_grad_norm_over_stages
from distrain.distributed.strategy import Parallelism
from distrain.distributed.tensor_parallel import apply_tensor_parallel, clip_grad_norm
from distrain.training.activations import ActivationCheckpointing, apply_activation_checkpointing
from distrain.training.amp import ParamDtype, cast_parameters

logger = logging.getLogger(__name__)


def parallelize(model: torch.nn.Module, parallelism: Parallelism, activation_checkpointing: ActivationCheckpointing | None,
                compile: bool, param_dtype: ParamDtype = "float32") -> ParallelModel:
    """Split ``model``, cast its parameters for forward, checkpoint its activations, apply the strategy (shard,
    replicate, or a plugin's own way) and compile it, in that order; return the handle to train it through."""
    world, dims, strategy = parallelism.world, parallelism.dims, parallelism.strategy
    mesh = None
    if world.is_distributed and (strategy.mesh_dims or dims.tp > 1 or dims.pp > 1):
        mesh = dims.build_mesh(torch.device(world.device).type, keep=strategy.mesh_dims)
    if not any(p.is_meta for p in model.parameters()):  # FSDP's delayed init materialises its shards itself
        model.to(world.device)  # a split releases the parts other ranks hold, below
    parts = split(model, parallelism, mesh)

    cast_parameters(model, param_dtype)
    if activation_checkpointing is not None:
        apply_activation_checkpointing(model, activation_checkpointing.modules)
    declared, offload_to_cpu = getattr(model, "activation_checkpoint_units", lambda: ([], False))()
    if declared:
        apply_activation_checkpointing(model, declared, "model (its checkpoint_wrapper)", offload_to_cpu)

    parallelism.sync.attach(model)  # the sync mode counts (and may average) the parameters of the bare model
    if parallelism.balancer is not None:
        parallelism.balancer.attach(model)  # and the balance times its forwards
    applied = strategy.apply(model, mesh, parallelism)

    if compile:
        applied = dataclasses.replace(applied, module=apply_compile(applied.module, torch.device(world.device)))
    return ParallelModel(applied, model, world, dims, parallelism.sync, parallelism.balancer, split=parts,
                         forward_is_collective=strategy.forward_is_collective)


def split(model: torch.nn.Module, parallelism: Parallelism, mesh=None) -> Split:
    """Step 1 (also what evaluate, predict and ``serve --tensor-parallel`` apply): tensor parallelism or
    pipeline stages where the degrees ask for them (``mesh``: the job's, built here when not given), and
    which ranks report losses and metrics. Returns how the model was split: in lines for ``distrain
    check``, and how a split model's state is held and its gradients clipped (parts: DTensors, on any mesh;
    stages: the norm's square summed over the stages' group)."""
    world, dims = parallelism.world, parallelism.dims
    if mesh is None and (dims.tp > 1 or dims.pp > 1):
        mesh = dims.build_mesh(torch.device(world.device).type)
    parts = Split()
    if dims.tp > 1:
        layers = apply_tensor_parallel(model, mesh["tp"], parallelism.tensor_plan)
        described = [f"tensor parallel  {len(layers)} linear layer(s) split over {dims.tp} ranks"]
        parts = Split(described, holding=GATHERED, clip_grad_norm=clip_grad_norm)
        if world.is_primary:
            logger.info("tensor parallel: %d linear layer(s) split over mesh %s", len(layers), dims.describe())
    elif dims.pp > 1:
        pipe = parallelism.pipeline
        stages = apply_pipeline(model, mesh["pp"], pipe.schedule, pipe.microbatches, pipe.split_points, world.device)
        parts = Split([f"pipeline {line}" for line in stages.describe()], holding=STAGES,
                      clip_grad_norm=partial(clip_grad_norm_over_stages, group=mesh["pp"].get_group()))
    where = dims.coordinates(world.rank)  # losses and metrics: the first tensor-parallel rank of the last stage
    set_reporting(where["tp"] == 0 and where["pp"] == dims.pp - 1)
    return parts


def apply_compile(module: torch.nn.Module, device: torch.device) -> torch.nn.Module:
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
