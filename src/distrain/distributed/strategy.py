"""How the model is spread over the workers: the registered strategies and a job's :class:`Parallelism`.

A strategy (``distributed.strategy.type``: ``ddp``, ``fsdp`` or a plugin's) is its options, its config-time
checks and its :meth:`~ParallelStrategy.apply`: how it wraps a worker's model over the job's device mesh, and
what it hands back (:class:`~distrain.distributed.applied.Applied`: the module to run, how its state is held,
no-sync and clipping). :func:`distrain.training.parallelize.parallelize` calls ``apply`` at its place in a
fixed order and returns a :class:`~distrain.distributed.parallel_model.ParallelModel`, the small handle the
trainer steps through, composed of what ``apply`` gave. A new data-parallel flavour is one registered subclass
(and its test); nothing else names it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import torch

from distrain.config.errors import Problem
from distrain.distributed.applied import Applied
from distrain.distributed.auto_shares import AutomaticShares
from distrain.distributed.compression import GradientCompression
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.sync import EveryStep, SyncMode
from distrain.distributed.tensor_parallel import PlanOverride
from distrain.distributed.world import SINGLE, World
from distrain.registry import Registrable


class ParallelStrategy(Registrable):
    """Base class of the registered strategies: options, checks and :meth:`apply`; ``ddp`` (replicate the model,
    average gradients) is the default."""

    default_implementation = "ddp"
    runtime_args = ("world",)
    #: forward passes communicate (sharded parameters are gathered): every rank must run the same
    #: number of them, so evaluation forwards a worker's placeholder slices too
    forward_is_collective: bool = False
    #: every worker holds the whole model, so a sync mode may average parameters (local SGD, DiLoCo)
    replicates_parameters = False
    #: gradients go through a communication hook that may compress them (``gradient_compression``)
    accepts_gradient_compression = False
    #: runs a pipelined model (``pipeline_parallel_size`` > 1) as its data-parallel part
    pipelines = True
    #: the strategy itself casts the parameters for forward (its own mixed-precision setting), so the
    #: trainer's ``param_dtype`` must be given there instead
    casts_parameters = False
    #: the device-mesh dimensions ``apply`` works over, kept even at size 1 (FSDP's ``dp_shard``): with any,
    #: a multi-process job's mesh is built for it; with none, only a split model has a mesh
    mesh_dims: tuple[str, ...] = ()
    #: applying it imports torch's compiler front end (``fully_shard`` and DTensors do), so the fork server
    #: preloads that for its workers (:mod:`distrain.runtime.worker_server`; it knows the built-in and installed
    #: strategies, not an ``--include-package`` one); a wrong value costs start-up time, never correctness, so
    #: the base assumes it does
    imports_compiler = True
    #: a check, before any data is read, of the modules the options name or the model declares for the
    #: strategy (``unit_problems(arguments, model, path) -> list[Problem]``, a classmethod, run on the model
    #: built on the meta device, e.g. FSDP's shard units); None: nothing to check
    unit_problems: ClassVar[Callable[[dict[str, Any], torch.nn.Module, str], list[Problem]] | None] = None

    def __init__(self, world: World = SINGLE) -> None:
        self.world = world

    @classmethod
    def dims(cls, world_size: int, arguments: dict[str, Any]) -> ParallelDims:
        """The parallel degrees this strategy gives ``world_size`` processes (``arguments``: its config)."""
        return ParallelDims.data_parallel(world_size)

    @classmethod
    def problems(cls, arguments: dict[str, Any], world_size: int, path: str, uses_cuda: bool = False) -> list[Problem]:
        """Checks that span the strategy and the rest of the job, made before any data is read
        (``uses_cuda``: whether the job's processes run on CUDA devices)."""
        return []

    def model_init_context(self, dims: ParallelDims | None = None) -> contextlib.AbstractContextManager:
        """Where this worker builds the model under the job's degrees ``dims``, and the process settings
        building it needs (a sharding strategy builds it on the meta device and materialises only its
        shards; both built-in strategies set glibc's heap for how they free memory)."""
        return contextlib.nullcontext()

    def dry_run_notes(self) -> list[str]:
        """What a dry run (``distrain check --world-size N``) says about these options (a setting that costs memory)."""
        return []

    def apply(self, model: torch.nn.Module, mesh: Any, parallelism: Parallelism) -> Applied:
        """Spread this worker's ``model`` (on its device, already split, cast and checkpointed) over the data-parallel
        ranks: ``mesh`` is the job's device mesh (None where no split and no :attr:`mesh_dims` asked for one),
        ``parallelism`` the rest of the job's decisions (world, degrees, sync mode, gradient compression).
        Returns what forward runs on and how the handle steps it."""
        raise NotImplementedError(f"{type(self).__name__} does not say how it applies to a model (apply)")


@dataclass(frozen=True)
class PipelineSchedule:
    """How a pipelined model runs (see :class:`~distrain.distributed.config.PipelineConfig`)."""

    schedule: str = "1f1b"
    microbatches: int = 1
    split_points: list[int] | None = None


@dataclass
class Parallelism:
    """Everything :func:`~distrain.training.parallelize.parallelize` applies to one worker's model, decided
    from the ``distributed`` block once: the degrees, the strategy's options, and when workers agree."""

    world: World
    dims: ParallelDims
    strategy: ParallelStrategy
    sync: SyncMode
    compression: GradientCompression | None = None
    balancer: AutomaticShares | None = None
    tensor_plan: PlanOverride | None = None
    pipeline: PipelineSchedule = PipelineSchedule()

    @classmethod
    def data_parallel(cls, world: World) -> Parallelism:
        """The default: every worker a ``ddp`` replica, gradients averaged every step."""
        strategy = ParallelStrategy.by_name(ParallelStrategy.default_implementation)(world=world)
        return cls(world, ParallelDims.data_parallel(world.size), strategy, EveryStep(world))
