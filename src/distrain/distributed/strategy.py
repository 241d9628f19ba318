"""How the model is spread over the workers, as data: the registered strategy options and a job's :class:`Parallelism`.

A strategy (``distributed.strategy.type``: ``ddp``, ``fsdp`` or a plugin's) is a set of options and
config-time checks; it keeps no model and does no work. :func:`distrain.training.parallelize.parallelize`
applies the options in a fixed order with plain functions and returns a
:class:`~distrain.distributed.parallel_model.ParallelModel`, the small handle the trainer steps through.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from distrain.config.errors import Problem
from distrain.distributed.auto_shares import AutomaticShares
from distrain.distributed.compression import GradientCompression
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.sync import EveryStep, SyncMode
from distrain.distributed.tensor_parallel import PlanOverride
from distrain.distributed.world import SINGLE, World
from distrain.registry import Registrable


class ParallelStrategy(Registrable):
    """Base class of the registered options; ``ddp`` (replicate the model, average gradients) is the default."""

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
