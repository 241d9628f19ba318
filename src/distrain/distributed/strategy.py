"""How the model is spread over the workers: the one seam between the trainer and parallel libraries.

A strategy wraps the model, skips gradient synchronisation on accumulation micro-steps, clips
gradients (a global norm, whatever the sharding) and gets/sets the model and optimizer state on
every rank, so a save can gather (or write) shards with all ranks taking part. The trainer calls
these and never names DDP, FSDP or a process group.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator

import torch

from distrain.config.errors import Problem
from distrain.distributed.auto_shares import AutomaticShares
from distrain.distributed.model_split import ModelSplit
from distrain.distributed.optimizer_state import is_named, to_indexed
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.sync import EveryStep, SyncMode
from distrain.distributed.world import SINGLE, World
from distrain.registry import Registrable
from distrain.distributed.tensor_parallel import PlanOverride


class ParallelStrategy(Registrable):
    """Base class; ``ddp`` (replicate the model, average gradients) is the default."""

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
        self.model: torch.nn.Module | None = None
        self.sync: SyncMode = EveryStep(world)
        self.balancer: AutomaticShares | None = None
        #: the job's parallel degrees and how the model is split (tensor or pipeline degrees above 1)
        self.split = ModelSplit(world, ParallelDims.data_parallel(world.size))

    @classmethod
    def dims(cls, world_size: int, arguments: dict[str, Any]) -> ParallelDims:
        """The parallel degrees this strategy gives ``world_size`` processes (``arguments``: its config)."""
        return ParallelDims.data_parallel(world_size)

    @classmethod
    def problems(cls, arguments: dict[str, Any], world_size: int, path: str, uses_cuda: bool = False) -> list[Problem]:
        """Checks that span the strategy and the rest of the job, made before any data is read
        (``uses_cuda``: whether the job's processes run on CUDA devices)."""
        return []

    def use_layout(self, layout: ParallelDims, tensor_plan: PlanOverride | None = None,
                   schedule: str = "1f1b", microbatches: int = 1, split_points: list[int] | None = None) -> None:
        """Set before the model is split and wrapped: the job's degrees (``tensor_plan``: what the config
        says of the model's own tensor-parallel plan; ``schedule``, ``microbatches`` and ``split_points``: the pipeline's)."""
        self.split = ModelSplit(self.world, layout, tensor_plan, schedule, microbatches, split_points)

    @property
    def layout(self) -> ParallelDims:
        return self.split.layout

    @property
    def splits_model(self) -> bool:
        return self.split.splits

    def job_mesh(self):
        """The job's device mesh (``pp x dp_replicate x dp_shard x tp``, dimensions of size 1 left out)."""
        return self.split.job_mesh()

    def model_init_context(self) -> contextlib.AbstractContextManager:
        """Where this worker builds the model (a sharding strategy may build it on the meta device
        and materialise only its shards in :meth:`wrap`)."""
        return contextlib.nullcontext()

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """Move ``model`` to this worker's device (a split model is there already, its other ranks' parts
        released) and return the module to call forward on."""
        self.model = model if self.split.splits else model.to(self.world.device)
        self._attach(self.model)
        return self.model

    def _attach(self, model: torch.nn.Module) -> None:
        """The sync mode counts (and may average) ``model``'s parameters; a balancer times its forwards."""
        self.sync.attach(model)
        if self.balancer is not None:
            self.balancer.attach(model)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradients computed inside are not synchronised yet (an accumulation micro-step)."""
        yield

    def clip_grad_norm(self, parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
        if self.split.splits:
            return self.split.clip_grad_norm(parameters, max_norm)
        return torch.nn.utils.clip_grad_norm_(list(parameters), max_norm)

    def model_state_dict(self) -> dict[str, torch.Tensor]:
        """The full model state (a collective under sharding strategies: call it on every rank)."""
        assert self.model is not None, "wrap() the model first"
        if self.split.splits:
            return self.split.model_state_dict(self.model)
        return self.model.state_dict()

    def load_model_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Load a full model state on every rank (each keeps what it holds); aliases may be missing."""
        assert self.model is not None, "wrap() the model first"
        if self.split.splits:
            self.split.load_model_state_dict(self.model, state)
            return
        self.model.load_state_dict(state, strict=False)

    def optimizer_state_dict(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        if self.split.splits:
            return self.split.optimizer_state_dict(self.model, optimizer)
        return optimizer.state_dict()

    def load_optimizer_state_dict(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        """Load an optimizer state saved under any strategy (keyed by parameter index or name)."""
        if self.split.splits:
            self.split.load_optimizer_state_dict(self.model, optimizer, state)
            return
        if is_named(state):
            assert self.model is not None, "wrap() the model first"
            state = to_indexed(state, optimizer, self.model)
        optimizer.load_state_dict(state)

    # --------------------------------------------------------------- synchronisation (sync modes)
    def use_sync(self, sync: SyncMode) -> None:
        """Set before :meth:`wrap`: when the workers agree (see :mod:`distrain.distributed.sync`)."""
        self.sync = sync

    def use_balancer(self, balancer: AutomaticShares) -> None:
        """Set before :meth:`wrap`: shares of the global batch follow measured speeds."""
        self.balancer = balancer

    def use_train_loader(self, loader: Any) -> None:
        """The loader of the training batches (whose split an automatic balance sets)."""
        if self.balancer is not None:
            self.balancer.use_loader(loader)

    def before_optimizer_step(self, parameters: Iterable[torch.nn.Parameter], local_weight: Any,
                              total_weight: Any) -> None:
        """Gradients are ready; ``local_weight`` of the step's ``total_weight`` were this worker's."""
        self.sync.before_step(parameters, local_weight, total_weight)

    def after_optimizer_step(self, step: int, local_weight: Any) -> None:
        """Global optimizer step ``step`` was taken (a sync point for parameter-averaging modes)."""
        self.sync.after_step(step, local_weight)
        if self.balancer is not None:
            self.balancer.after_step(step, local_weight)

    def end_epoch(self) -> None:
        self.sync.end_epoch()

    def epoch_counters(self) -> dict[str, int]:
        """This epoch's synchronisations and the bytes they moved (none on one process), and with
        an automatic balance each worker's speed and share."""
        counters = self.sync.take_counters()
        if self.balancer is not None:
            counters |= self.balancer.report()
        return counters if self.world.is_distributed else {}

    def stateful_parts(self) -> dict[str, Any]:
        """Checkpointed state shared by every worker."""
        parts: dict[str, Any] = {"sync": self.sync}
        if self.balancer is not None:
            parts["shares"] = self.balancer
        return parts

    def rank_parts(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """Checkpointed state of each worker's own (parameters and optimizer between averages)."""
        if not self.sync.has_rank_state:
            return {}
        return {"sync": _SyncRankState(self.sync, optimizer)}


class _SyncRankState:
    def __init__(self, sync: SyncMode, optimizer: torch.optim.Optimizer) -> None:
        self.sync = sync
        self.optimizer = optimizer

    def state_dict(self) -> dict[str, Any] | None:
        return self.sync.rank_state_dict(self.optimizer)

    def load_state_dict(self, state: dict[str, Any] | None) -> None:
        self.sync.load_rank_state_dict(self.optimizer, state)
