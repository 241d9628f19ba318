"""The ``distributed`` block of an experiment."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Literal

from annotated_types import Ge, Gt, Le, MinLen

from distrain.config.errors import Problem
from distrain.distributed.auto_shares import AutoBalance, AutomaticShares
from distrain.distributed.compression import GradientCompression
from distrain.distributed.ddp_accelerator import DdpAccelerator
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.strategy import Parallelism, ParallelStrategy, PipelineSchedule
from distrain.distributed.sync import EveryStep, SyncMode
from distrain.distributed.world import World
from distrain.config.lazy import Lazy
from distrain.distributed.tensor_parallel import PlanOverride


@dataclass
class PipelineConfig:
    """``schedule``: ``gpipe`` (all forwards, then all backwards) or ``1f1b`` (one forward, one
    backward once the pipeline is full: fewer activations held). ``microbatches``: how many pieces
    each data-parallel rank's batch is cut into (at least the number of stages; default: that number).
    ``split_points``: the unit index where each stage after the first begins (overrides the even cut)."""

    schedule: Literal["gpipe", "1f1b"] = "1f1b"
    microbatches: Annotated[int, Ge(1)] | None = None
    #: where stages 2.. begin, as indices into the model's ``pipeline_units()`` (default: an even cut)
    split_points: list[int] | None = None


@dataclass
class DistributedConfig:
    """One process per ``cuda_devices`` entry on each node; ``-1`` entries are CPU processes (gloo).

    ``device_weights`` gives each worker (global rank order) its share of every global batch, so a
    faster card can take more samples; the loss weighting keeps the updates identical. ``"auto"``
    (or ``{"type": "auto", ...}``, see :class:`AutoBalance`) measures the speeds and sets the shares. ``strategy``
    says how the model is spread over the workers (default ``ddp``: replicated). ``max_restarts``:
    how many times a lost worker (killed, crashed, hung) restarts the job from its latest checkpoint;
    ``min_workers``: a worker that fails again right after such a restart is left out and the job goes on
    without it, while at least that many remain (one node, no split model; see :mod:`distrain.runtime.launch`).
    ``sync`` says when the workers agree on the model: ``every_step`` (default: gradients averaged in
    every step), ``local_sgd`` or ``diloco`` (parameters averaged every ``sync_every`` steps; see
    :mod:`distrain.distributed.sync`). ``gradient_compression`` (``fp16``, ``bf16``, ``powersgd``)
    shrinks what every-step gradient averaging sends (see :mod:`distrain.distributed.compression`).
    """

    cuda_devices: Annotated[list[Annotated[int, Ge(-1)]], MinLen(1)]
    num_nodes: Annotated[int, Ge(1)] = 1
    node_rank: Annotated[int, Ge(0)] = 0
    master_addr: str = "127.0.0.1"
    master_port: Annotated[int, Ge(1), Le(65535)] | None = None
    backend: Literal["gloo", "nccl"] | None = None
    timeout: Annotated[float, Gt(0)] = 1800.0
    device_weights: list[Annotated[float, Gt(0)]] | Literal["auto"] | AutoBalance | None = None
    strategy: Lazy[ParallelStrategy] | None = None
    max_restarts: Annotated[int, Ge(0)] = 0
    min_workers: Annotated[int, Ge(1)] | None = None
    sync: Lazy[SyncMode] | None = None
    gradient_compression: GradientCompression | None = None
    tensor_parallel_size: Annotated[int, Ge(1)] = 1
    tensor_parallel_plan: dict[str, Literal["colwise", "rowwise"]] | None = None
    tensor_parallel_plan_overrides: dict[str, Literal["colwise", "rowwise", "none"]] | None = None
    pipeline_parallel_size: Annotated[int, Ge(1)] = 1
    pipeline: PipelineConfig | None = None
    #: AllenNLP's name for ``strategy`` (see :mod:`distrain.distributed.ddp_accelerator`)
    ddp_accelerator: DdpAccelerator | None = None

    def __post_init__(self) -> None:
        if self.ddp_accelerator is not None and self.strategy is None:
            self.strategy = self.ddp_accelerator.strategy()

    @property
    def model_split(self) -> int:
        """How many ranks hold the parts of one model (tensor x pipeline degrees)."""
        return self.tensor_parallel_size * self.pipeline_parallel_size

    def microbatches(self) -> int:
        configured = self.pipeline.microbatches if self.pipeline is not None else None
        return configured or self.pipeline_parallel_size

    @property
    def world_size(self) -> int:
        return len(self.cuda_devices) * self.num_nodes

    @property
    def uses_cuda(self) -> bool:
        return any(device >= 0 for device in self.cuda_devices)

    def default_backend(self) -> str:
        return self.backend or ("nccl" if self.uses_cuda else "gloo")

    def strategy_class(self) -> type[ParallelStrategy]:
        if self.strategy is not None and self.strategy.cls is not None:
            return self.strategy.cls
        return ParallelStrategy.by_name(ParallelStrategy.default_implementation)

    def dims(self, world_size: int | None = None) -> ParallelDims:
        """The parallel degrees of ``world_size`` processes (default: this block's own count)."""

        arguments = self.strategy.arguments if self.strategy is not None else {}
        world_size = world_size or self.world_size
        if self.model_split == 1:
            return self.strategy_class().dims(world_size, arguments)
        data = self.strategy_class().dims(max(1, world_size // self.model_split), arguments)
        return dataclasses.replace(data, world_size=world_size, tp=self.tensor_parallel_size,
                                   pp=self.pipeline_parallel_size)

    def fixed_weights(self) -> tuple[float, ...] | None:
        """The configured relative shares (None: equal, or measured with ``auto``)."""
        return tuple(self.device_weights) if isinstance(self.device_weights, list) else None

    def tensor_plan_override(self) -> PlanOverride | None:
        """``tensor_parallel_plan`` replaces the model's plan; ``tensor_parallel_plan_overrides`` extends it."""
        if self.tensor_parallel_plan is None and self.tensor_parallel_plan_overrides is None:
            return None
        return PlanOverride(replace=self.tensor_parallel_plan, extend=self.tensor_parallel_plan_overrides)

    def problems(self, path: str = "distributed", world_size: int | None = None) -> list[Problem]:
        """Checks spanning several keys (single values are checked by their annotations)."""
        found = []
        world_size = world_size or self.world_size
        if self.ddp_accelerator is not None:
            found += self.ddp_accelerator.problems(f"{path}.ddp_accelerator")
            if self.strategy is not None and "ddp_accelerator" not in self.strategy.description:
                found.append(Problem(f"{path}.ddp_accelerator", "is AllenNLP's name for strategy; give one of them"))
        if self.uses_cuda and not all(device >= 0 for device in self.cuda_devices):
            found.append(Problem(f"{path}.cuda_devices", "cannot mix CUDA devices and CPU (-1) processes"))
        if not 0 <= self.node_rank < max(self.num_nodes, 1):
            found.append(Problem(f"{path}.node_rank", f"must be in [0, {self.num_nodes - 1}], got {self.node_rank}"))
        if self.num_nodes > 1 and self.master_port is None:
            found.append(Problem(f"{path}.master_port", "required when num_nodes > 1 (all nodes must agree on it)"))
        if self.backend == "nccl" and not self.uses_cuda:
            found.append(Problem(f"{path}.backend", "nccl needs CUDA devices; CPU (-1) processes use gloo"))
        dims = self.dims(world_size)
        found += dims.problems(path)
        if _auto_balance(self) is not None and dims.dp_size < 2:
            found.append(Problem(f"{path}.device_weights", "auto balances shares between data-parallel workers; "
                                 f"this job has {dims.dp_size}"))
        if self.fixed_weights() is not None and len(self.device_weights) != dims.dp_size:
            found.append(Problem(
                f"{path}.device_weights",
                f"needs one weight per data-parallel worker ({dims.dp_size}), got {len(self.device_weights)}",
            ))
        arguments = self.strategy.arguments if self.strategy is not None else {}
        found += self.strategy_class().problems(arguments, max(1, world_size // self.model_split),
                                                f"{path}.strategy", uses_cuda=self.uses_cuda)
        found += _model_split_problems(self, path)
        found += _sync_problems(self, path)
        if self.min_workers is not None:
            if self.min_workers > len(self.cuda_devices):
                found.append(Problem(f"{path}.min_workers", f"{self.min_workers} is more than the "
                                     f"{len(self.cuda_devices)} worker(s) of cuda_devices"))
            if self.num_nodes > 1 or self.model_split > 1:
                found.append(Problem(f"{path}.min_workers", "leaves out a lost worker on one node with a "
                                     "replicated model only (num_nodes 1, no tensor or pipeline parallelism)"))
            if self.max_restarts < 2:
                found.append(Problem(f"{path}.min_workers", "needs max_restarts of at least 2: a worker is left "
                                     "out when it fails again right after a restart"))
        return found

    def without_worker(self, rank: int) -> DistributedConfig:
        """This block with worker ``rank`` left out (its device and its weight)."""
        devices = [device for index, device in enumerate(self.cuda_devices) if index != rank]
        weights = self.device_weights
        if isinstance(weights, list):
            weights = [weight for index, weight in enumerate(weights) if index != rank]
        return dataclasses.replace(self, cuda_devices=devices, device_weights=weights)


def build_parallelism(distributed: DistributedConfig, world: World) -> Parallelism:
    """What :func:`~distrain.training.parallelize.parallelize` applies on this worker: the strategy's options,
    the job's degrees, the sync mode, gradient compression and automatic balance, each built once here."""
    strategy = (distributed.strategy.construct(world=world) if distributed.strategy is not None
                else distributed.strategy_class()(world=world))
    sync = distributed.sync.construct(world=world) if distributed.sync is not None else EveryStep(world)
    balance = _auto_balance(distributed)
    pipeline = distributed.pipeline
    return Parallelism(
        world, distributed.dims(world.size), strategy, sync, compression=distributed.gradient_compression,
        balancer=AutomaticShares(world, balance) if balance is not None else None,
        tensor_plan=distributed.tensor_plan_override(),
        pipeline=PipelineSchedule(pipeline.schedule if pipeline is not None else "1f1b", distributed.microbatches(),
                                  pipeline.split_points if pipeline is not None else None),
    )


def _sync_class(config: DistributedConfig) -> type[SyncMode]:
    if config.sync is not None and config.sync.cls is not None:
        return config.sync.cls
    return SyncMode.by_name(SyncMode.default_implementation)


def _model_split_problems(config: DistributedConfig, path: str) -> list[Problem]:
    """Model parallelism and the rest of the block (the model's own plan is checked with the model)."""
    found = []
    if config.model_split == 1:
        for key in ("tensor_parallel_plan", "tensor_parallel_plan_overrides"):
            if getattr(config, key) is not None:
                found.append(Problem(f"{path}.{key}", "is used only with tensor_parallel_size > 1"))
        if config.pipeline is not None:
            found.append(Problem(f"{path}.pipeline", "is used only with pipeline_parallel_size > 1"))
        return found
    if config.sync is not None and _sync_class(config) is not SyncMode.by_name(SyncMode.default_implementation):
        found.append(Problem(f"{path}.sync", "a split model (tensor or pipeline parallel) averages gradients "
                             "every step; remove sync"))
    if config.gradient_compression is not None:
        found.append(Problem(f"{path}.gradient_compression", "is not applied to a split model "
                             "(tensor or pipeline parallel); remove it"))
    if config.device_weights is not None:
        found.append(Problem(f"{path}.device_weights", "a split model needs equal shares; remove device_weights"))
    if config.tensor_parallel_size > 1 and config.pipeline_parallel_size > 1:
        found.append(Problem(f"{path}.pipeline_parallel_size", "tensor and pipeline parallelism are not combined "
                             "yet; give one of them (either goes with data parallelism)"))
    if config.pipeline_parallel_size > 1 and not config.strategy_class().pipelines:
        name = ParallelStrategy.name_of(config.strategy_class()) or config.strategy_class().__name__
        found.append(Problem(f"{path}.strategy", f"strategy {name} does not run pipeline stages; use ddp "
                             "(each stage's gradients averaged over the data-parallel replicas)"))
    if config.pipeline_parallel_size > 1 and config.microbatches() < config.pipeline_parallel_size:
        found.append(Problem(f"{path}.pipeline.microbatches", f"must be at least the pipeline_parallel_size "
                             f"({config.pipeline_parallel_size}) so every stage has work, got {config.microbatches()}"))
    return found


def _sync_problems(config: DistributedConfig, path: str) -> list[Problem]:
    found = []
    mode = SyncMode.name_of(_sync_class(config)) or _sync_class(config).__name__
    strategy = config.strategy_class()
    name = ParallelStrategy.name_of(strategy) or strategy.__name__
    if config.gradient_compression is not None:
        if not _sync_class(config).averages_gradients:
            found.append(Problem(f"{path}.gradient_compression",
                                 f"compresses gradients, which sync {mode} never sends (it averages "
                                 "parameters); remove it or use sync every_step"))
        elif not strategy.accepts_gradient_compression:
            found.append(Problem(f"{path}.gradient_compression", f"strategy {name} cannot compress gradients"))
    if not _sync_class(config).averages_gradients and not strategy.replicates_parameters:
        found.append(Problem(f"{path}.sync", f"{mode} averages whole parameters, which strategy {name} does "
                                             "not hold on every worker; use strategy ddp or sync every_step"))
    return found


def make_world(
    rank: int, size: int, local_rank: int, local_size: int, device_id: int, distributed: DistributedConfig | None
) -> World:
    """This process's place in the job; its data-parallel coordinate comes from the parallel degrees."""
    dims = distributed.dims(size) if distributed is not None else ParallelDims.data_parallel(size)
    weights = distributed.fixed_weights() if distributed is not None else None
    return World(
        rank=rank, size=size, local_rank=local_rank, local_size=local_size,
        device=f"cuda:{device_id}" if device_id >= 0 else "cpu", weights=weights,
        dp_rank=dims.dp_rank(rank), dp_size=dims.dp_size,
    )


def _auto_balance(distributed: DistributedConfig) -> AutoBalance | None:
    """The measured-shares settings ``device_weights`` asks for (``"auto"``: the defaults), or None."""
    if distributed.device_weights == "auto":
        return AutoBalance()
    return distributed.device_weights if isinstance(distributed.device_weights, AutoBalance) else None
