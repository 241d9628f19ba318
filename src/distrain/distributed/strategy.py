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
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.sync import EveryStep, SyncMode
from distrain.distributed.world import SINGLE, World
from distrain.registry import Registrable


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

    def __init__(self, world: World = SINGLE) -> None:
        self.world = world
        self.model: torch.nn.Module | None = None
        self.sync: SyncMode = EveryStep(world)
        self.balancer: AutomaticShares | None = None
        #: the job's parallel degrees; tensor or pipeline degrees above 1 split the model as well
        self.layout = ParallelDims.data_parallel(world.size)
        self.tensor_plan: dict[str, str] | None = None
        self.schedule, self.microbatches, self.split_points = "1f1b", 1, None
        self.device_mesh = None
        #: set by :meth:`split_model`: the linear layers split by tensor parallelism, this rank's pipeline stage
        self.split_layers: list[str] | None = None
        self.pipeline = None

    @classmethod
    def dims(cls, world_size: int, arguments: dict[str, Any]) -> ParallelDims:
        """The parallel degrees this strategy gives ``world_size`` processes (``arguments``: its config)."""
        return ParallelDims.data_parallel(world_size)

    @classmethod
    def problems(cls, arguments: dict[str, Any], world_size: int, path: str, uses_cuda: bool = False) -> list[Problem]:
        """Checks that span the strategy and the rest of the job, made before any data is read
        (``uses_cuda``: whether the job's processes run on CUDA devices)."""
        return []

    # ------------------------------------------------------------------------- model parallelism
    def use_layout(self, layout: ParallelDims, tensor_plan: dict[str, str] | None = None,
                   schedule: str = "1f1b", microbatches: int = 1, split_points: list[int] | None = None) -> None:
        """Set before :meth:`wrap`: the job's degrees (``tensor_plan``: the config's override of the
        model's own tensor-parallel plan; ``schedule``, ``microbatches`` and ``split_points``: the pipeline's)."""
        self.layout = layout
        self.tensor_plan = tensor_plan
        self.schedule = schedule
        self.microbatches = microbatches
        self.split_points = split_points

    @property
    def splits_model(self) -> bool:
        return self.layout.tp > 1 or self.layout.pp > 1

    def job_mesh(self):
        """The job's device mesh (``pp x dp_replicate x dp_shard x tp``, dimensions of size 1 left out)."""
        if self.device_mesh is None:
            device_type = torch.device(self.world.device).type
            self.device_mesh = self.layout.build_mesh("cpu" if device_type == "meta" else device_type)
        return self.device_mesh

    def split_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """Split ``model`` over the tensor-parallel ranks (in place) and decide whether this rank
        reports losses and metrics (the first tensor-parallel rank of the last pipeline stage)."""
        from distrain.distributed.collectives import set_reporting

        if self.layout.tp > 1:
            from distrain.config.errors import ConfigError
            from distrain.distributed.strategies.tensor_parallel import (
                apply_tensor_parallel,
                declared_plan,
                plan_problems,
            )

            problems = plan_problems(model, self.layout.tp, self.tensor_plan)
            if problems:
                raise ConfigError(problems)
            plan = self.tensor_plan if self.tensor_plan is not None else declared_plan(model)
            names = apply_tensor_parallel(model, self.job_mesh()["tp"], plan)
            self.split_layers = names
            if self.world.is_primary:
                import logging

                logging.getLogger(__name__).info("tensor parallel: %d linear layer(s) split over mesh %s",
                                                 len(names), self.layout.describe())
        where = self.layout.coordinates(self.world.rank)
        if self.layout.pp > 1:
            self._pipeline(model, where["pp"])
        set_reporting(where["tp"] == 0 and where["pp"] == self.layout.pp - 1)
        return model

    def _pipeline(self, model: torch.nn.Module, stage: int) -> None:
        from distrain.config.errors import ConfigError
        from distrain.distributed.strategies.pipeline import Pipeline, pipeline_problems

        problems = pipeline_problems(model, self.layout.pp, self.split_points)
        if problems:
            raise ConfigError(problems)
        self.pipeline = Pipeline(model, stage, self.layout.pp, self.job_mesh()["pp"].get_group(), self.world.device,
                                 self.schedule, self.microbatches, self.split_points)
        self.pipeline.release_other_stages()
        model.forward = self.pipeline.forward  # training and evaluation run through the stages
        if self.world.is_primary:
            import logging

            for index, names in enumerate(self.pipeline.runs):
                logging.getLogger(__name__).info("pipeline stage %d of %d: %s", index, self.layout.pp, ", ".join(names))

    def describe_split(self) -> list[str]:
        """How the model is split (for ``distrain check``): tensor-parallel layers, pipeline stages."""
        lines = []
        if self.split_layers is not None:
            lines.append(f"tensor parallel  {len(self.split_layers)} linear layer(s) split over {self.layout.tp} ranks")
        if self.pipeline is not None:
            lines += [f"pipeline {line}" for line in self.pipeline.describe()]
        return lines

    def _gathered(self, local: dict[str, Any]) -> dict[str, Any]:
        """Every stage's part (from the first data-parallel and tensor rank of each), merged on rank 0."""
        from distrain.distributed.collectives import all_gather_object

        where = self.layout.coordinates(self.world.rank)
        mine = local if where["dp_replicate"] == where["dp_shard"] == where["tp"] == 0 else {}
        merged: dict[str, Any] = {}
        for part in all_gather_object(mine):
            merged.update(part)
        return merged if self.world.is_primary else {}

    def model_init_context(self) -> contextlib.AbstractContextManager:
        """Where this worker builds the model (a sharding strategy may build it on the meta device
        and materialise only its shards in :meth:`wrap`)."""
        return contextlib.nullcontext()

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """Move ``model`` to this worker's device and return the module to call forward on."""
        self.model = model.to(self.world.device)
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
        if self.layout.pp > 1:  # each stage holds some parameters: the norm's square sums over the stages
            import torch.distributed as dist

            parameters = [p for p in parameters if p.grad is not None]
            square = torch.zeros((), dtype=torch.float32)
            if parameters:
                square = torch.nn.utils.get_total_norm([p.grad for p in parameters]).float() ** 2
            dist.all_reduce(square, group=self.job_mesh()["pp"].get_group())
            total = square.sqrt()
            torch.nn.utils.clip_grads_with_norm_(parameters, max_norm, total)
            return total
        if self.layout.tp > 1:
            from distrain.distributed.strategies.tensor_parallel import clip_grad_norm

            return clip_grad_norm(parameters, max_norm)
        return torch.nn.utils.clip_grad_norm_(list(parameters), max_norm)

    def _split_state_options(self, **extra):
        """Full (gathered, named) state dicts of a split model, on rank 0's host."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions

        return StateDictOptions(full_state_dict=True, cpu_offload=True, **extra)

    def model_state_dict(self) -> dict[str, torch.Tensor]:
        """The full model state (a collective under sharding strategies: call it on every rank)."""
        assert self.model is not None, "wrap() the model first"
        if self.layout.pp > 1:
            return self._gathered({k: v.detach().cpu() for k, v in self.model.state_dict().items() if not v.is_meta})
        if self.layout.tp > 1:
            from torch.distributed.checkpoint.state_dict import get_model_state_dict

            return get_model_state_dict(self.model, options=self._split_state_options())
        return self.model.state_dict()

    def load_model_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Load a full model state on every rank (each keeps what it holds); aliases may be missing."""
        assert self.model is not None, "wrap() the model first"
        if self.layout.pp > 1:  # this stage's entries only
            held = {k for k, v in self.model.state_dict().items() if not v.is_meta}
            self.model.load_state_dict({k: v for k, v in state.items() if k in held}, strict=False)
            return
        if self.layout.tp > 1:
            from torch.distributed.checkpoint.state_dict import set_model_state_dict

            set_model_state_dict(self.model, state, options=self._split_state_options(strict=False))
            return
        self.model.load_state_dict(state, strict=False)

    def optimizer_state_dict(self, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        if self.layout.pp > 1:  # by name, each stage's entries gathered
            from distrain.distributed.optimizer_state import to_named

            named = to_named(optimizer.state_dict(), optimizer, self.model)
            held = {name for name, p in self.model.named_parameters() if not p.is_meta}
            states = self._gathered({name: value for name, value in named["state"].items() if name in held})
            return {"state": states, "param_groups": named["param_groups"]} if self.world.is_primary else {}
        if self.layout.tp > 1:
            from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

            return get_optimizer_state_dict(self.model, optimizer, options=self._split_state_options())
        return optimizer.state_dict()

    def load_optimizer_state_dict(self, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
        """Load an optimizer state saved under any strategy (keyed by parameter index or name)."""
        from distrain.distributed.optimizer_state import is_named, to_indexed, to_named

        if self.layout.pp > 1:
            if not is_named(state):
                state = to_named(state, optimizer, self.model)
            held = {name for name, p in self.model.named_parameters() if not p.is_meta}
            state = {**state, "state": {k: v for k, v in state["state"].items() if k in held}}
            optimizer.load_state_dict(to_indexed(state, optimizer, self.model))
            return
        if self.layout.tp > 1:
            from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

            if not is_named(state):  # saved by a replicating strategy
                state = to_named(state, optimizer, self.model)
            set_optimizer_state_dict(self.model, optimizer, state, options=self._split_state_options())
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
