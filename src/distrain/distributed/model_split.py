"""How one model is split over the ranks of a data-parallel coordinate: tensor and pipeline parallelism.

A :class:`ModelSplit` holds the job's parallel degrees and, once :meth:`ModelSplit.apply` has split a
model, what the split made: the linear layers sharded by tensor parallelism
(:mod:`distrain.distributed.tensor_parallel`, from the model's ``tensor_parallel_plan()`` or the config's
override) or this rank's pipeline stage (:mod:`distrain.distributed.pipeline`). It is applied before the
strategy shards or replicates the model (see :mod:`distrain.training.parallelize`); any strategy then
takes the model's state, and clips its gradients, through it. With no degree above 1 it does nothing but
decide that this rank reports losses and metrics.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

import torch

from distrain.config.errors import ConfigError
from distrain.distributed.collectives import all_gather_object, set_reporting
from distrain.distributed.optimizer_state import is_named, to_indexed, to_named
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.world import World
from distrain.distributed.tensor_parallel import PlanOverride

logger = logging.getLogger(__name__)


class ModelSplit:
    """The job's parallel degrees and the split they make of the model (tensor x pipeline)."""

    def __init__(self, world: World, layout: ParallelDims, tensor_plan: PlanOverride | None = None,
                 schedule: str = "1f1b", microbatches: int = 1, split_points: list[int] | None = None) -> None:
        self.world = world
        self.layout = layout
        #: the config's say over the model's own tensor-parallel plan (replace or extend it)
        self.tensor_plan = tensor_plan
        self.schedule, self.microbatches, self.split_points = schedule, microbatches, split_points
        self.device_mesh = None
        #: set by :meth:`apply`: the linear layers split by tensor parallelism, this rank's pipeline stage
        self.split_layers: list[str] | None = None
        self.pipeline = None

    @property
    def splits(self) -> bool:
        return self.layout.tp > 1 or self.layout.pp > 1

    def job_mesh(self):
        """The job's device mesh (``pp x dp_replicate x dp_shard x tp``, dimensions of size 1 left out)."""
        if self.device_mesh is None:
            device_type = torch.device(self.world.device).type
            self.device_mesh = self.layout.build_mesh("cpu" if device_type == "meta" else device_type)
        return self.device_mesh

    # ------------------------------------------------------------------------------ splitting
    def apply(self, model: torch.nn.Module) -> torch.nn.Module:
        """Split ``model`` over the tensor-parallel ranks or into pipeline stages (in place) and decide
        whether this rank reports losses and metrics (the first tensor-parallel rank of the last stage)."""
        if self.splits:
            model.to(self.world.device)  # the parts other ranks hold are released below (to the meta device)
        if self.layout.tp > 1:
            from distrain.distributed.tensor_parallel import apply_tensor_parallel, plan_problems, resolved_plan

            problems = plan_problems(model, self.layout.tp, self.tensor_plan)
            if problems:
                raise ConfigError(problems)
            plan = resolved_plan(model, self.tensor_plan)
            self.split_layers = apply_tensor_parallel(model, self.job_mesh()["tp"], plan)
            if self.world.is_primary:
                logger.info("tensor parallel: %d linear layer(s) split over mesh %s",
                            len(self.split_layers), self.layout.describe())
        where = self.layout.coordinates(self.world.rank)
        if self.layout.pp > 1:
            self._pipeline(model, where["pp"])
        set_reporting(where["tp"] == 0 and where["pp"] == self.layout.pp - 1)
        return model

    def _pipeline(self, model: torch.nn.Module, stage: int) -> None:
        from distrain.distributed.pipeline import Pipeline, pipeline_problems

        problems = pipeline_problems(model, self.layout.pp, self.split_points)
        if problems:
            raise ConfigError(problems)
        self.pipeline = Pipeline(model, stage, self.layout.pp, self.job_mesh()["pp"].get_group(), self.world.device,
                                 self.schedule, self.microbatches, self.split_points)
        self.pipeline.release_other_stages()
        model.forward = self.pipeline.forward  # training and evaluation run through the stages
        if self.world.is_primary:
            for index, names in enumerate(self.pipeline.runs):
                logger.info("pipeline stage %d of %d: %s", index, self.layout.pp, ", ".join(names))

    def describe(self) -> list[str]:
        """How the model is split (for ``distrain check``): tensor-parallel layers, pipeline stages."""
        lines = []
        if self.split_layers is not None:
            lines.append(f"tensor parallel  {len(self.split_layers)} linear layer(s) split over {self.layout.tp} ranks")
        if self.pipeline is not None:
            lines += [f"pipeline {line}" for line in self.pipeline.describe()]
        return lines

    # ------------------------------------------------------------------------------- gradients
    def clip_grad_norm(self, parameters: Iterable[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
        """Clip by the norm of the whole model's gradients, whichever rank holds each part."""
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
        from distrain.distributed.tensor_parallel import clip_grad_norm

        return clip_grad_norm(parameters, max_norm)

    # ------------------------------------------------------------------------------ state dicts
    def _gathered(self, local: dict[str, Any]) -> dict[str, Any]:
        """Every stage's part (from the first data-parallel and tensor rank of each), merged on rank 0."""
        where = self.layout.coordinates(self.world.rank)
        mine = local if where["dp_replicate"] == where["dp_shard"] == where["tp"] == 0 else {}
        merged: dict[str, Any] = {}
        for part in all_gather_object(mine):
            merged.update(part)
        return merged if self.world.is_primary else {}

    @staticmethod
    def _options(**extra):
        """Full (gathered, named) state dicts of a split model, on rank 0's host."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions

        return StateDictOptions(full_state_dict=True, cpu_offload=True, **extra)

    def model_state_dict(self, model: torch.nn.Module) -> dict[str, torch.Tensor]:
        """The whole model's state on rank 0 (a collective: every rank calls it)."""
        if self.layout.pp > 1:
            return self._gathered({k: v.detach().cpu() for k, v in model.state_dict().items() if not v.is_meta})
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        return get_model_state_dict(model, options=self._options())

    def load_model_state_dict(self, model: torch.nn.Module, state: dict[str, torch.Tensor]) -> None:
        """Load a whole model's state; each rank keeps the part it holds."""
        if self.layout.pp > 1:  # this stage's entries only
            held = {k for k, v in model.state_dict().items() if not v.is_meta}
            model.load_state_dict({k: v for k, v in state.items() if k in held}, strict=False)
            return
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        set_model_state_dict(model, state, options=self._options(strict=False))

    def optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        """The optimizer's state by parameter name, gathered to rank 0."""
        if self.layout.pp > 1:  # by name, each stage's entries gathered
            named = to_named(optimizer.state_dict(), optimizer, model)
            held = {name for name, p in model.named_parameters() if not p.is_meta}
            states = self._gathered({name: value for name, value in named["state"].items() if name in held})
            return {"state": states, "param_groups": named["param_groups"]} if self.world.is_primary else {}
        from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

        return get_optimizer_state_dict(model, optimizer, options=self._options())

    def load_optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                                  state: dict[str, Any]) -> None:
        """Load an optimizer state saved under any layout (keyed by parameter index or name)."""
        if not is_named(state):  # saved by a replicating strategy
            state = to_named(state, optimizer, model)
        if self.layout.pp > 1:
            held = {name for name, p in model.named_parameters() if not p.is_meta}
            state = {**state, "state": {k: v for k, v in state["state"].items() if k in held}}
            optimizer.load_state_dict(to_indexed(state, optimizer, model))
            return
        from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

        set_optimizer_state_dict(model, optimizer, state, options=self._options())
