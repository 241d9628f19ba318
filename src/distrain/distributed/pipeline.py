"""Place runs of a model's units on different ranks and stream micro-batches through them
(``torch.distributed.pipelining``: GPipe or 1F1B schedules).

The model declares its units in forward order (:meth:`~distrain.models.model.Model.pipeline_units`),
what the first unit receives (``pipeline_inputs``), how one unit runs on what the previous one
passed on (``pipeline_unit``) and the loss and metrics from the last unit's output
(``pipeline_loss``). Stage ``s`` of ``P`` holds a contiguous run of units (as equal in number as
they divide, or cut at the configured ``split_points``); the parameters of the other stages' units
are released (the meta device).

Each data-parallel rank's batch is cut into ``M`` equal micro-batches. A batch that does not
divide into ``M`` (the last, smaller one of an epoch) runs as the largest number of equal
micro-batches up to ``M`` that divides it, under GPipe when that is fewer than the stages (1F1B
needs at least as many). Stages are built per distinct micro-batch shape (the schedules learn the
shapes once), and kept.

The trainer sees one forward per batch returning the batch's mean loss (on the last stage; the
others report nothing), and one backward: the schedule has already computed this batch's
gradients, so the backward only scales them by what the trainer's loss scaling asks and adds them
to those of earlier accumulation micro-steps. Gradients are those of the batch-mean loss of one
process (micro-batch losses are weighted by their share of the batch, not averaged again).
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

import torch

from distrain.config.errors import Problem

logger = logging.getLogger(__name__)


def declared_units(model: torch.nn.Module) -> list[str]:
    declared = getattr(model, "pipeline_units", None)
    return list(declared()) if callable(declared) else []


def pipeline_problems(model: torch.nn.Module, stages: int, split_points: list[int] | None = None,
                      path: str = "distributed") -> list[Problem]:
    units = declared_units(model)
    if not units:
        return [Problem(f"{path}.pipeline_parallel_size", f"model {type(model).__name__} declares no pipeline "
                        "units (it cannot be split into stages); set pipeline_parallel_size 1")]
    if stages > len(units):
        return [Problem(f"{path}.pipeline_parallel_size", f"{stages} stages, but the model has only "
                        f"{len(units)} pipeline unit(s) ({', '.join(units)})")]
    if split_points is not None:
        inside = all(0 < a < b < len(units) for a, b in zip(split_points, split_points[1:] + [len(units) - 0.5]))
        if len(split_points) != stages - 1 or not inside:
            return [Problem(f"{path}.pipeline.split_points", f"needs {stages - 1} increasing unit indices in "
                            f"[1, {len(units) - 1}] (where stages 2.. begin; units: {', '.join(units)}), "
                            f"got {split_points}")]
    return []


def stage_units(units: list[str], stages: int, split_points: list[int] | None = None) -> list[list[str]]:
    """Contiguous runs of ``units``, one per stage: cut at ``split_points`` (the unit index where each
    stage after the first begins), else as equal in number as they divide (earlier stages take the
    extra one)."""
    if split_points is not None:
        bounds = [0, *split_points, len(units)]
        return [units[start:end] for start, end in zip(bounds, bounds[1:])]
    size, extra = divmod(len(units), stages)
    runs, start = [], 0
    for stage in range(stages):
        end = start + size + (1 if stage < extra else 0)
        runs.append(units[start:end])
        start = end
    return runs


def microbatch_count(batch: int, wanted: int) -> int:
    """The largest count up to ``wanted`` that cuts ``batch`` samples into equal micro-batches."""
    return next(count for count in range(min(wanted, batch), 0, -1) if batch % count == 0)


def apply_pipeline(model: torch.nn.Module, mesh: Any, schedule: str, microbatches: int,
                   split_points: list[int] | None, device: str) -> Pipeline:
    """Keep this rank's stage of ``model`` (on ``device``; the 1-D ``mesh`` runs one stage per rank),
    release the other stages' parameters, and run training and evaluation through the stages (the
    model's ``forward`` is replaced). A model that cannot be cut so is a config error."""
    from distrain.config.errors import ConfigError

    problems = pipeline_problems(model, mesh.size(), split_points)
    if problems:
        raise ConfigError(problems)
    pipeline = Pipeline(model, mesh.get_local_rank(), mesh.size(), mesh.get_group(), device, schedule, microbatches,
                        split_points)
    pipeline.release_other_stages()
    model.forward = pipeline.forward
    if mesh.get_rank() == 0:
        for index, names in enumerate(pipeline.runs):
            logger.info("pipeline stage %d of %d: %s", index, mesh.size(), ", ".join(names))
    return pipeline


def clip_grad_norm_over_stages(parameters: Iterable[torch.nn.Parameter], max_norm: float, group: Any) -> torch.Tensor:
    """Clip by the whole model's gradient norm: each stage holds some parameters, so the norm's square
    sums over the stages (the ranks of ``group``)."""
    import torch.distributed as dist

    parameters = [p for p in parameters if p.grad is not None]
    square = torch.zeros((), dtype=torch.float32)
    if parameters:
        square = torch.nn.utils.get_total_norm([p.grad for p in parameters]).float() ** 2
    dist.all_reduce(square, group=group)
    total = square.sqrt()
    torch.nn.utils.clip_grads_with_norm_(parameters, max_norm, total)
    return total


class _Stage(torch.nn.Module):
    """One stage's units run in order; what one returns is what the next receives."""

    def __init__(self, model: torch.nn.Module, names: list[str]) -> None:
        super().__init__()
        self.names = names
        self.units = torch.nn.ModuleList(model.get_submodule(name) for name in names)
        self._model = [model]  # not a submodule: the stage holds only its units

    def forward(self, *carried: torch.Tensor) -> Any:
        model = self._model[0]
        for name in self.names:
            carried = model.pipeline_unit(name, *carried)
            if not isinstance(carried, tuple):
                carried = (carried,)
        return carried if len(carried) > 1 else carried[0]


class _ScaledGradients(torch.autograd.Function):
    """The trainer's backward of a pipelined forward: the schedule already left this batch's
    gradients in ``.grad``; scale them by the incoming gradient and add those of earlier micro-steps."""

    @staticmethod
    def forward(ctx, anchor, loss, pipeline):
        ctx.pipeline = pipeline
        return loss.clone()

    @staticmethod
    def backward(ctx, grad):
        ctx.pipeline.finish_gradients(grad)
        return None, None, None


class Pipeline:
    """This rank's stage of ``model`` and the schedules that run it; ``forward(**batch)`` replaces
    the model's forward (training and evaluation go through the stages)."""

    def __init__(self, model: torch.nn.Module, stage: int, stages: int, group: Any, device: str,
                 schedule: str, microbatches: int, split_points: list[int] | None = None) -> None:
        self.model = model
        self.stage = stage
        self.stages = stages
        self.group = group
        self.device = torch.device(device)
        self.schedule = schedule
        self.microbatches = microbatches
        self.runs = stage_units(declared_units(model), stages, split_points)
        self.module = _Stage(model, self.runs[stage])
        self.is_first, self.is_last = stage == 0, stage == stages - 1
        self._schedules: dict[Any, Any] = {}
        self._stashed: dict[torch.nn.Parameter, torch.Tensor | None] = {}
        self._anchor = torch.zeros((), requires_grad=True)
        self._inferring = False
        self._batch = 1

    # ------------------------------------------------------------------------------- placement
    def release_other_stages(self) -> None:
        """Parameters of units on other stages move to the meta device (no memory)."""
        mine = {id(p) for p in self.module.parameters()}
        for run_index, names in enumerate(self.runs):
            if run_index == self.stage:
                continue
            for name in names:
                unit = self.model.get_submodule(name)
                for module in unit.modules():
                    for key, param in list(module._parameters.items()):
                        if param is not None and id(param) not in mine:
                            released = torch.nn.Parameter(torch.empty_like(param, device="meta"),
                                                          requires_grad=param.requires_grad)
                            released.released_by_pipeline = True  # another stage holds it (for byte counts)
                            module._parameters[key] = released

    def describe(self) -> list[str]:
        """One line per stage: its units and their parameter count."""
        lines = []
        for index, names in enumerate(self.runs):
            count = sum(p.numel() for name in names for p in self.model.get_submodule(name).parameters())
            lines.append(f"stage {index}: {', '.join(names)} ({count:,} parameters)")
        return lines

    # ---------------------------------------------------------------------------------- running
    def _schedule_for(self, shapes: Any, count: int, training: bool):
        key = (shapes, count, training)
        # a new schedule's first training step infers gradient shapes by calling the loss once more
        self._inferring = training and key not in self._schedules
        if key not in self._schedules:
            from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

            stage = PipelineStage(self.module, self.stage, self.stages, self.device, group=self.group)
            kind = Schedule1F1B if self.schedule == "1f1b" and count >= self.stages else ScheduleGPipe
            self._schedules[key] = kind(stage, count, loss_fn=self._loss, scale_grads=False)
        return self._schedules[key]

    def _loss(self, output: Any, target: torch.Tensor) -> torch.Tensor:
        """One micro-batch's mean loss, weighted by its share of the batch (so they sum to the batch mean)."""
        output = output if isinstance(output, tuple) else (output,)
        if self._inferring:  # the shape-inference call: its samples must not count in the metrics
            self._inferring = False
            with self.model.metrics_frozen():
                return self.model.pipeline_loss(output, target) * (target.shape[0] / self._batch)
        loss = self.model.pipeline_loss(output, target)
        return loss * (target.shape[0] / self._batch)

    def forward(self, **batch: Any) -> dict[str, torch.Tensor]:
        inputs = self.model.pipeline_inputs(**batch)
        target = batch.get("label")
        size = int(inputs[0].shape[0])
        training = self.model.training and torch.is_grad_enabled()
        if target is None:
            raise ValueError("a pipelined model computes its loss on the last stage and needs labels")
        if size == 0:  # a placeholder slice: nothing to run, no gradient
            if not training:
                return {}
            self._stash()
            return {"loss": _ScaledGradients.apply(self._anchor, torch.zeros(()), self)}
        count = microbatch_count(size, self.microbatches)
        shapes = tuple((tuple(t.shape), t.dtype) for t in inputs)
        schedule = self._schedule_for(shapes, count, training)
        self._batch = size
        losses: list[torch.Tensor] = []
        args = inputs if self.is_first else ()
        kwargs = {"target": target, "losses": losses} if self.is_last else {}
        if training:
            self._stash()
            schedule.step(*args, **kwargs)
        else:
            schedule.eval(*args, **kwargs)
        loss = torch.stack([l.detach().float() for l in losses]).sum() if losses else torch.zeros(())
        if not training:
            return {"loss": loss} if self.is_last else {}
        return {"loss": _ScaledGradients.apply(self._anchor, loss, self)}

    def _stash(self) -> None:
        """Keep the gradients of earlier accumulation micro-steps aside while the schedule runs."""
        self._stashed = {}
        for p in self.module.parameters():
            self._stashed[p] = p.grad
            p.grad = None

    def finish_gradients(self, scale: torch.Tensor) -> None:
        factor = float(scale)
        with torch.no_grad():
            for p in self.module.parameters():
                earlier = self._stashed.get(p)
                if p.grad is not None and factor != 1.0:
                    p.grad.mul_(factor)
                if earlier is not None:
                    p.grad = earlier if p.grad is None else p.grad.add_(earlier)
        self._stashed = {}
