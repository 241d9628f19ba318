"""The training loop. It is the same on every worker; distribution reaches it through a few calls.

Each optimizer step covers ``num_gradient_accumulation_steps`` global batches. A worker's loss on
its slice is scaled by ``dp_size × slice_size / step_samples`` before ``backward``: gradients are
averaged over the data-parallel ranks, so the update equals the single-process update on
the same global samples however they are split (uneven shares, empty slices and ``device_weights``
included). The loop receives its parts built (:class:`~distrain.training.step_parts.StepParts`, by
:func:`~distrain.experiment.assemble.assemble`); the model is synchronised, clipped and saved through
the handle ``parallelize`` returned (:class:`~distrain.distributed.parallel_model.ParallelModel`), so
nothing here names a parallel library.

A model whose loss is a mean over a varying count (masked tokens) returns that count as
``"loss_weight"``; see :mod:`distrain.training.loss_weighting` for how such steps stay exact.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

import torch

from distrain.config.errors import ConfigError, Problem
from distrain.config.constraints import NonNegativeInt, PositiveFloat, PositiveInt
from distrain.data.loader import Batch, DataLoader, to_device
from distrain.distributed.collectives import all_reduce_sum, barrier, counted
from distrain.distributed.world import SINGLE, World
from distrain.errors import RunFailed
from distrain.registry import Registrable
from distrain.training.callback import Callback
from distrain.training.activations import offloaded, offloading_problems
from distrain.training.checkpointing import CheckpointError
from distrain.job import history
from distrain.job.disk import write_text_atomically
from distrain.training.loss_weighting import StepWeights
from distrain.training.metric_tracker import MetricTracker, ValidationMetric
from distrain.training.moving_average import averaged_weights
from distrain.training.progress_display import ProgressDisplay
from distrain.job.stop import Preempted, StopRequest
from distrain.training.step_agreement import StepDecision, agree
from distrain.training.step_parts import AssemblyOptions, StepParts, steps_per_epoch
from distrain.training.recovery import (CallbackStates, EpochProgress, RankParts, position_in_batches,
                                        samples_in_batches)

logger = logging.getLogger(__name__)


class Trainer(Registrable):
    """Trains a model built from the config; the loop is the same on every worker. It receives its parts
    built (``parts``); the keys they are built from are every trainer block's ``assembly_options``."""

    default_implementation = "gradient_descent"
    runtime_args = ("parts", "serialization_dir", "world")
    assembly_options = AssemblyOptions
    #: global batches per optimizer step
    accumulation: int = 1
    #: optimizer steps in one epoch
    steps_per_epoch: int = 0

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return AssemblyOptions.argument_problems(arguments)

    def train(self) -> dict[str, Any]:
        raise NotImplementedError

    def resume_from_latest_checkpoint(self) -> None:
        raise CheckpointError(f"trainer {type(self).__name__} cannot resume from a checkpoint")


class TrainingError(RunFailed):
    """Training cannot go on (e.g. a non-finite loss); the message says where it stopped."""


@Trainer.register("gradient_descent")
class GradientDescentTrainer(Trainer):
    """Mini-batch gradient descent over global batches, on one worker or many, with exact resume."""

    #: optimizer steps taken; training seconds before this run resumed, and when training started; the open bar
    step, elapsed_before, _started, _open_bar = 0, 0.0, 0.0, None
    #: set by a callback's ``on_epoch`` (the same on every worker) to end training after this epoch
    stop_reason: str | None = None
    #: set by a callback (alike on every worker): validate the coming epoch (else tracker and best weights stay)
    validate_this_epoch: bool = True

    def __init__(
        self,
        parts: StepParts,
        serialization_dir: Path,
        world: World = SINGLE,
        num_epochs: NonNegativeInt = 20,
        validation_metric: ValidationMetric = "-loss",
        patience: NonNegativeInt | None = None,
        grad_norm: PositiveFloat | None = None,
        grad_clipping: PositiveFloat | None = None,
        num_gradient_accumulation_steps: PositiveInt = 1,
        skip_nonfinite_steps: bool = False,
        callbacks: list[Callback] | None = None,
        progress_bar: bool = True,
        activation_offloading: bool = False,
    ) -> None:
        self.model, self.parallel, self.optimizer = parts.model, parts.parallel, parts.optimizer
        self.scheduler, self.moving_average, self.checkpoints = parts.scheduler, parts.moving_average, parts.checkpoints
        self.amp, self.regularizer = parts.amp, parts.regularizer
        self.train_loader, self.validation_loader = parts.train_loader, parts.validation_loader
        self.serialization_dir, self.world, self.device = Path(serialization_dir), world, torch.device(world.device)
        if activation_offloading and offloading_problems(self.device):
            raise ConfigError(offloading_problems(self.device))
        self.activation_offloading, self.num_epochs = activation_offloading, num_epochs
        self.accumulation = num_gradient_accumulation_steps
        self.steps_per_epoch = steps_per_epoch(self.train_loader, self.accumulation)
        self.grad_norm, self.grad_clipping, self.skip_nonfinite_steps = grad_norm, grad_clipping, skip_nonfinite_steps
        self.callbacks, self.progress_bar = callbacks or [], progress_bar and world.is_primary
        self.tracker, self.step_weights = MetricTracker(validation_metric, patience), StepWeights()
        self.position, self.last_metrics, self.stop_request = EpochProgress(0), {}, StopRequest()

    # ------------------------------------------------------------------------------- the loop
    def train(self) -> dict[str, Any]:
        with self.stop_request.installed():
            try:
                return self._train_epochs()
            except BaseException as error:
                if self.world.is_primary:
                    history.record(self.serialization_dir, "stopped", step=self.step, reason=_first_line(error))
                for callback in self.callbacks:
                    callback.on_failure(self, error)
                raise
            finally:
                self._close_progress()

    def _train_epochs(self) -> dict[str, Any]:
        self._started = time.monotonic()
        for callback in self.callbacks:
            callback.on_start(self)
        while self.position.epoch < self.num_epochs and not self.tracker.should_stop() and self.stop_reason is None:
            epoch = self.position.epoch
            epoch_metrics = {f"training_{k}": v for k, v in self._train_epoch(epoch).items()}
            validates = self.validation_loader is not None and self.validate_this_epoch
            if validates:
                with averaged_weights(self.moving_average):
                    validated = self.evaluate(self.validation_loader)
                epoch_metrics.update({f"validation_{k}": v for k, v in validated.items()})
            tracked = {k.partition("_")[2]: v for k, v in epoch_metrics.items() if k.startswith("validation_")}
            is_best = (validates or self.validation_loader is None) and self.tracker.update(
                epoch, tracked or {k.partition("_")[2]: v for k, v in epoch_metrics.items()})
            if self.scheduler is not None:
                self.scheduler.step_epoch(tracked.get(self.tracker.name))
            self.last_metrics = self._summarise(epoch, epoch_metrics, is_best)
            self.position = self.position.next_epoch()
            for callback in self.callbacks:
                callback.on_epoch(self, epoch, self.last_metrics)
            self._write_epoch_metrics(epoch, self.last_metrics)
            saved = self.checkpoints.save(self.position, self.step, self.stateful_parts, self.rank_parts, is_best)
            self._stop_if_asked(agree(nonfinite=False, stop=self.stop_requested, save=False,
                                       distributed=self.world.is_distributed).wait().stop, saved)
            if self.tracker.should_stop():
                logger.info("stopping early: no improvement in %d epochs", self.tracker.patience)
            if self.stop_reason is not None:
                logger.info("stopping: %s", self.stop_reason)
        if self.validation_loader is not None:
            self.checkpoints.load_best_model()
        elif self.moving_average is not None:
            self.moving_average.assign_average_value()
        for callback in self.callbacks:
            callback.on_end(self, self.last_metrics)
        return self.last_metrics

    def _train_epoch(self, epoch: int) -> dict[str, float]:
        """Train on what is left of ``epoch``: a resumed epoch skips the global batches already consumed."""
        self.model.train()
        self.train_loader.set_epoch(epoch)
        if self.position.epoch != epoch:
            self.position = EpochProgress(epoch)
        done = self.position.to(self.device)
        display = self._progress(epoch)
        self.checkpoints.start_epoch(done.batches)
        remaining = itertools.islice(iter(self.train_loader), done.batches, None)
        for micro_batches in _grouped(remaining, self.accumulation):
            due = self.checkpoints.due(done.batches + len(micro_batches))
            losses, decision = self._forward_backward(micro_batches, save_due=due)
            if decision.nonfinite:
                self._skip_nonfinite_step(epoch, done.batches)
            else:
                done.add(losses)
                self._optimizer_step(decision.loss_weight, losses, micro_batches)
            done.batches += len(micro_batches)
            shown_loss = display.update(done) if display is not None else None
            for callback in self.callbacks:
                callback.on_step(self, self.step, shown_loss)
            if decision.save or decision.stop:
                saved = self.checkpoints.save(self.position, self.step, self.stateful_parts, self.rank_parts)
                self._stop_if_asked(decision.stop, saved)
        self.parallel.end_epoch()
        if display is not None:
            display.close()
        totals = all_reduce_sum(counted(torch.stack([done.loss_sum, done.loss_weight])))
        return {"loss": float(totals[0] / totals[1].clamp(min=1e-12)), **self.model.get_metrics(reset=True)}

    def _forward_backward(self, micro_batches: list[Batch], save_due: bool) -> tuple[list, StepDecision]:
        """Forward and backward every micro-batch of one optimizer step, gradients synchronised on the
        last. The step's agreement (flags and loss weight of all workers) starts before that last
        backward, so it travels while gradients are reduced. Returns [(loss, weight, samples)] and it."""
        step_samples = sum(batch.global_size for batch in micro_batches)
        losses, pending = [], None
        for position, batch in enumerate(micro_batches):
            last = position == len(micro_batches) - 1
            frozen = self.model.metrics_frozen if batch.size == 0 else contextlib.nullcontext
            with (contextlib.nullcontext() if last else self.parallel.no_sync()), frozen():
                loss, weight, scaled = self._forward(batch, step_samples)
                losses.append((loss, weight, batch.size))
                if last:
                    pending = agree(nonfinite=_nonfinite(losses), stop=self.stop_requested, save=save_due,
                                    loss_weight=counted(self.step_weights.weight), distributed=self.world.is_distributed)
                    if self.step_weights.active and len(micro_batches) == 1:  # the weighted mean's scale now
                        scaled = self.step_weights.settle(scaled, pending.loss_weight())
                self.amp.backward(scaled)
        return losses, pending.wait()

    def _forward(self, batch: Batch, step_samples: int) -> tuple[torch.Tensor, Any, torch.Tensor]:
        """This worker's (mean loss, what it averages over, the loss scaled for backward)."""
        with self.amp.autocast(), offloaded(self.activation_offloading):
            output = self.parallel.module(**to_device(batch.inputs, self.device))
        loss = output["loss"]
        if "loss_weight" in output:
            weight = self.step_weights.add(output["loss_weight"], batch.size, step_samples)
            scale = (weight * (self.world.dp_size / step_samples)).to(loss.dtype)
            scaled = loss * scale
        else:
            weight = float(batch.size)
            scale = self.world.dp_size * batch.size / step_samples
            scaled = loss if scale == 1.0 else loss * scale
        for callback in self.callbacks:  # one may replace or augment what is backpropagated
            scaled = callback.backward_loss(self, output, scaled, scale)
        return loss.detach(), weight, scaled

    def _optimizer_step(self, loss_weight_total: float, losses: list, micro_batches: list[Batch]) -> None:
        self.amp.unscale(self.optimizer)
        weighted = self.step_weights.active
        self.step_weights.normalise(self.model.parameters(), loss_weight_total)
        local = sum(weight for _, weight, _ in losses)  # this worker's part of the step's weight
        total = loss_weight_total if weighted else sum(batch.global_size for batch in micro_batches)
        self.parallel.before_optimizer_step(self.model.parameters(), local, total)
        for callback in self.callbacks:
            callback.on_averaged_gradients(self, self.step + 1)
        if self.regularizer is not None:  # the penalty's gradient, once per step, after averaging
            self.regularizer.add_gradients(self.model.named_parameters())
        if self.grad_norm is not None:
            self.parallel.clip_grad_norm(self.model.parameters(), self.grad_norm)
        if self.grad_clipping is not None:  # AllenNLP's order: the norm first, then each value
            _clamp_gradients(self.model.parameters(), self.grad_clipping)
        for callback in self.callbacks:
            callback.on_gradients(self, self.step + 1)
        self.amp.step(self.optimizer)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scheduler is not None:
            self.scheduler.step()
        self.step += 1
        self.parallel.after_optimizer_step(self.step, local)
        if self.moving_average is not None:
            self.moving_average.apply(self.step)

    def evaluate(self, loader: DataLoader) -> dict[str, float]:
        """Loss and metrics over ``loader``, each instance counted once across all workers."""
        from distrain.training.evaluation import evaluate

        return evaluate(self.model, loader, self.device, autocast=self.amp.autocast,
                        forward_placeholders=self.parallel.forward_is_collective)

    # ------------------------------------------------------------------------------ bookkeeping
    def _summarise(self, epoch: int, epoch_metrics: dict, is_best: bool) -> dict[str, Any]:
        counters = dict(self.parallel.epoch_counters())
        if self.checkpoints.world_changes:
            counters["world_changes"] = self.checkpoints.world_changes
        return self.tracker.summary(epoch, self.elapsed(), epoch_metrics, counters, is_best, self.last_metrics)

    def _write_epoch_metrics(self, epoch: int, metrics: dict[str, Any]) -> None:
        """``metrics_epoch_N.json`` and ``metrics.json``, written by the primary worker."""
        if self.world.is_primary:
            for name in (f"metrics_epoch_{epoch}.json", "metrics.json"):
                write_text_atomically(self.serialization_dir / name, json.dumps(metrics, indent=2))

    def stateful_parts(self) -> dict[str, Any]:
        """What a checkpoint holds besides the weights, by name; each part saves and loads itself.
        ``trainer`` is this loop's own progress (the data position, steps, the last epoch's summary)."""
        parts: dict[str, Any] = {
            "trainer": self,
            "optimizer": self.optimizer,
            "tracker": self.tracker,
            "amp": self.amp,
            "callbacks": CallbackStates(self.callbacks),
        }
        if self.scheduler is not None:
            parts["scheduler"] = self.scheduler
        if self.moving_average is not None:
            parts["moving_average"] = self.moving_average
        parts.update(self.parallel.shared_parts)
        return parts

    def rank_parts(self) -> RankParts:
        """What each worker holds for itself (random streams, its loss and metric sums in the epoch)."""
        return RankParts(self.position, self.model, self.parallel.rank_parts(self.optimizer))

    def state_dict(self) -> dict[str, Any]:
        position = {"epoch": self.position.epoch, "batches": self.position.batches}
        samples = samples_in_batches(self.checkpoints.sampler, self.position.epoch, self.position.batches)
        if samples is not None:  # lets a resume cut the same global batches into other micro-batches
            position["samples"] = samples
        return {
            "position": position,
            "step": self.step,
            "metrics": json.dumps(self.last_metrics),
            "elapsed": self.elapsed(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        saved = state["position"]  # in this run's batches: another world may cut other micro-batches
        self.position = EpochProgress(saved["epoch"], position_in_batches(self.checkpoints.sampler, saved))
        self.step = state["step"]
        self.last_metrics = json.loads(state["metrics"])
        self.elapsed_before = float(state["elapsed"])

    def resume_from_latest_checkpoint(self) -> None:
        self.checkpoints.restore_latest(self.stateful_parts, self.rank_parts)

    def elapsed(self) -> float:
        """Training seconds so far, including those before the run was resumed."""
        return self.elapsed_before + time.monotonic() - self._started

    # --------------------------------------------------------------------- stopping and bad steps
    @property
    def stop_requested(self) -> bool:
        return self.stop_request.signal_name is not None

    def _stop_if_asked(self, stop: bool, checkpoint: Path | None) -> None:
        if not stop:
            return
        barrier()  # the checkpoint is complete before any worker leaves
        reason = self.stop_request.signal_name or "a signal to another worker"
        raise Preempted(
            f"training stopped by {reason} after step {self.step} (epoch {self.position.epoch + 1}, "
            f"{self.position.batches} batch(es) into it); checkpoint written to "
            f"{checkpoint or self.checkpoints.latest() or self.checkpoints.directory}",
            str(checkpoint) if checkpoint else None,
        )

    def _skip_nonfinite_step(self, epoch: int, batches: int) -> None:
        where = f"step {self.step + 1} (epoch {epoch + 1}, batch {batches + 1})"
        if not self.skip_nonfinite_steps:
            latest = self.checkpoints.latest()
            kept = f"the last good checkpoint is {latest}" if latest else "no checkpoint was written yet"
            raise TrainingError(
                f"loss is not finite at {where}; {kept}. "
                "Set trainer.skip_nonfinite_steps to skip such steps instead"
            )
        self.optimizer.zero_grad(set_to_none=True)
        self.step_weights.discard()
        logger.warning("skipped %s: the loss is not finite on at least one worker", where)

    def _progress(self, epoch: int) -> ProgressDisplay | None:
        if not self.progress_bar:
            return None
        self._open_bar = ProgressDisplay(self, epoch)
        return self._open_bar

    def _close_progress(self) -> None:
        """Clear a bar an error left open, so the error message starts on a line of its own."""
        bar, self._open_bar = self._open_bar, None
        if bar is not None:
            bar.close()


def _clamp_gradients(parameters: Any, limit: float) -> None:
    """AllenNLP's ``grad_clipping``: each gradient value into [-limit, limit]. It clamps the step's
    averaged gradient (AllenNLP clamped each backward's), so any worker count makes the same update."""
    for parameter in parameters:
        if parameter.grad is not None:
            parameter.grad.clamp_(-limit, limit)


def _nonfinite(losses: list[tuple[torch.Tensor, Any, int]]) -> torch.Tensor | bool:
    """Whether any loss of a real (non-placeholder) batch of this worker is NaN or infinite (a tensor
    on the losses' device: reading it waits for the agreement)."""
    real = [loss for loss, _, size in losses if size > 0]
    return ~torch.isfinite(torch.stack(real)).all() if real else False


def _grouped(batches: Iterator[Batch], size: int) -> Iterator[list[Batch]]:
    while group := list(itertools.islice(batches, size)):
        yield group


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
