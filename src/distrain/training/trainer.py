"""The training loop. It is the same on every worker; distribution reaches it through a few calls.

Each optimizer step covers ``num_gradient_accumulation_steps`` global batches. A worker's loss on
its slice is scaled by ``dp_size × slice_size / step_samples`` before ``backward``: gradients are
averaged over the data-parallel ranks, so the update equals the single-process update on
the same global samples however they are split (uneven shares, empty slices and ``device_weights``
included). :func:`~distrain.training.parallelize.parallelize` applies the parallelisms; the model is
synchronised, clipped and saved through the handle it returns
(:class:`~distrain.distributed.parallel_model.ParallelModel`), so nothing here names a parallel library.

A model whose loss is a mean over a varying count (masked tokens) returns that count as
``"loss_weight"``; see :mod:`distrain.training.loss_weighting` for how such steps stay exact.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import math
import time
from pathlib import Path
from typing import Annotated, Any, Iterator, Mapping

import torch
from annotated_types import Ge

from distrain.config.errors import ConfigError, Problem
from distrain.config.constraints import NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt
from distrain.data.loader import Batch, DataLoader, to_device
from distrain.distributed.collectives import all_reduce_sum, barrier, counted
from distrain.distributed.strategy import Parallelism
from distrain.distributed.world import SINGLE, World
from distrain.errors import RunFailed
from distrain.config.lazy import Lazy
from distrain.models.model import Model
from distrain.registry import Registrable
from distrain.training.callback import Callback
from distrain.training.activations import ActivationCheckpointing, offloaded, offloading_problems
from distrain.training.amp import AmpDtype, MixedPrecision, ParamDtype, precision_problems, warn_if_emulated
from distrain.training.checkpoint_manager import DEFAULT_FORMAT, CheckpointFormat, CheckpointManager
from distrain.training.checkpoint_retention import CheckpointRetention, retention_problems
from distrain.training.checkpointing import CHECKPOINTS_FOLDER, CheckpointError
from distrain.job import history
from distrain.job.disk import write_text_atomically
from distrain.training.loss_weighting import StepWeights
from distrain.training.metric_tracker import MetricTracker, ValidationMetric
from distrain.training.moving_average import MovingAverage, averaged_weights
from distrain.training.parallelize import parallelize
from distrain.optim.optimizers import Optimizer
from distrain.training.progress_display import ProgressDisplay
from distrain.job.stop import Preempted, StopRequest
from distrain.training.step_agreement import StepDecision, agree
from distrain.training.recovery import (CallbackStates, EpochProgress, RankParts, position_in_batches,
                                        samples_in_batches)
from distrain.optim.schedulers import LearningRateScheduler

logger = logging.getLogger(__name__)


class Trainer(Registrable):
    """Trains a model built from the config; the loop is the same on every worker."""

    default_implementation = "gradient_descent"
    runtime_args = ("model", "train_loader", "validation_loader", "serialization_dir", "world", "parallelism",
                    "regularizer")
    #: global batches per optimizer step
    accumulation: int = 1
    #: optimizer steps in one epoch
    steps_per_epoch: int = 0

    def train(self) -> dict[str, Any]:
        raise NotImplementedError

    def resume_from_latest_checkpoint(self) -> None:
        raise CheckpointError(f"trainer {type(self).__name__} cannot resume from a checkpoint")


class TrainingError(RunFailed):
    """Training cannot go on (e.g. a non-finite loss); the message says where it stopped."""


@Trainer.register("gradient_descent")
class GradientDescentTrainer(Trainer):
    """Mini-batch gradient descent over global batches, on one worker or many, with exact resume."""

    def __init__(
        self,
        model: Model,
        train_loader: DataLoader,
        serialization_dir: Path,
        world: World = SINGLE,
        parallelism: Parallelism | None = None,
        validation_loader: DataLoader | None = None,
        optimizer: Lazy[Optimizer] | None = None,
        learning_rate_scheduler: Lazy[LearningRateScheduler] | None = None,
        num_epochs: NonNegativeInt = 20,
        validation_metric: ValidationMetric = "-loss",
        patience: NonNegativeInt | None = None,
        grad_norm: PositiveFloat | bool | None = None,
        grad_clipping: PositiveFloat | None = None,
        num_gradient_accumulation_steps: PositiveInt = 1,
        random_seed: NonNegativeInt = 13,
        keep_checkpoints: NonNegativeInt = 2,
        save_every_num_batches: PositiveInt | None = None,
        save_every_num_seconds: NonNegativeFloat | None = None,
        skip_nonfinite_steps: bool = False,
        callbacks: list[Callback] | None = None,
        progress_bar: bool = True,
        use_amp: bool = False,
        amp_dtype: AmpDtype = "bfloat16",
        param_dtype: ParamDtype = "float32",
        compile: bool = False,
        activation_checkpointing: ActivationCheckpointing | None = None,
        activation_offloading: bool = False,
        checkpoint_format: CheckpointFormat = DEFAULT_FORMAT,
        checkpointer: CheckpointRetention | None = None,
        cuda_device: Annotated[int, Ge(-1)] | None = None,
        regularizer: Any = None,
        moving_average: Lazy[MovingAverage] | None = None,
        run_confidence_checks: bool = True,  # AllenNLP's (a normalisation after a biased layer): accepted, unused
        enable_default_callbacks: bool = True,  # AllenNLP's (its console logger): accepted; distrain logs alike
    ) -> None:
        self.model = model
        self.train_loader = train_loader
        self.validation_loader = validation_loader
        self.serialization_dir = Path(serialization_dir)
        self.world = world
        self.num_epochs = num_epochs
        # AllenNLP's grad_norm: true computes norms without rescaling (distrain reports none), false is off
        self.grad_norm = None if isinstance(grad_norm, bool) else grad_norm
        self.grad_clipping = grad_clipping
        #: AllenNLP's ``model.regularizer``, applied at assembly (see :mod:`distrain.optim.regularizers`)
        self.regularizer = regularizer
        if checkpointer is not None:
            keep_checkpoints = checkpointer.keep
            save_every_num_seconds = checkpointer.save_every_num_seconds or save_every_num_seconds
            save_every_num_batches = checkpointer.save_every_num_batches or save_every_num_batches
        self.accumulation = num_gradient_accumulation_steps
        self.random_seed = random_seed
        self.callbacks = callbacks or []
        self.progress_bar = progress_bar and world.is_primary
        self.tracker = MetricTracker(validation_metric, patience)
        self.device = torch.device(world.device)
        if world.is_primary:
            self.serialization_dir.mkdir(parents=True, exist_ok=True)
        self.amp = MixedPrecision(use_amp, amp_dtype, self.device)
        self.step_weights = StepWeights()

        if activation_offloading and offloading_problems(self.device):
            raise ConfigError(offloading_problems(self.device))
        self.activation_offloading = activation_offloading
        parallelism = parallelism or Parallelism.data_parallel(world)
        if problems := precision_problems({"use_amp": use_amp, "param_dtype": param_dtype},
                                          parallelism.strategy.casts_parameters, parallelism.dims.pp > 1):
            raise ConfigError(problems)
        if world.is_primary:
            warn_if_emulated(use_amp, amp_dtype, param_dtype, self.device)
        #: the handle the step synchronises, clips and saves through; ``parallel.module`` runs forward
        self.parallel = parallelize(self.model, parallelism, activation_checkpointing, compile, param_dtype)
        named = list(self.model.named_parameters())
        self.optimizer = (optimizer or _default_optimizer()).construct(model_parameters=named)
        #: validation, the best weights and the final model use its averages (see :mod:`.moving_average`)
        self.moving_average = moving_average.construct(parameters=named) if moving_average else None
        self.steps_per_epoch = math.ceil(len(train_loader) / self.accumulation)
        self.scheduler = (
            learning_rate_scheduler.construct(
                optimizer=self.optimizer, num_training_steps=self.steps_per_epoch * num_epochs,
                **_epoch_shape(learning_rate_scheduler, num_epochs, self.steps_per_epoch),
            )
            if learning_rate_scheduler
            else None
        )
        self.step = 0
        self.checkpoints = CheckpointManager(
            self.serialization_dir / CHECKPOINTS_FOLDER, world, self.parallel, self.model, self.optimizer,
            sampler=getattr(train_loader, "sampler", None),
            checkpoint_format=checkpoint_format, keep=keep_checkpoints,
            every_num_batches=save_every_num_batches, every_num_seconds=save_every_num_seconds,
            averaged=self.moving_average.averaged if self.moving_average is not None else None,
        )
        self.skip_nonfinite_steps = skip_nonfinite_steps
        self.position = EpochProgress(0)
        self.last_metrics: dict[str, Any] = {}
        self.elapsed_before = 0.0
        self.stop_request = StopRequest()
        #: set by a callback's ``on_epoch`` (the same on every worker) to end training after this epoch
        self.stop_reason: str | None = None
        self._started = time.monotonic()
        self._open_bar: ProgressDisplay | None = None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return retention_problems(arguments) + precision_problems(arguments, path="param_dtype")

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
            if self.validation_loader is not None:
                with averaged_weights(self.moving_average):
                    validated = self.evaluate(self.validation_loader)
                epoch_metrics.update({f"validation_{k}": v for k, v in validated.items()})
            tracked = {k.partition("_")[2]: v for k, v in epoch_metrics.items() if k.startswith("validation_")}
            is_best = self.tracker.update(epoch, tracked or {k.partition("_")[2]: v for k, v in epoch_metrics.items()})
            if self.scheduler is not None:
                self.scheduler.step_epoch(tracked.get(self.tracker.name))
            self.last_metrics = self._summarise(epoch, epoch_metrics, is_best, self.last_metrics, self.elapsed())
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
            scaled = loss * (weight * (self.world.dp_size / step_samples)).to(loss.dtype)
        else:
            weight = float(batch.size)
            scale = self.world.dp_size * batch.size / step_samples
            scaled = loss if scale == 1.0 else loss * scale
        return loss.detach(), weight, scaled

    def _optimizer_step(self, loss_weight_total: float, losses: list, micro_batches: list[Batch]) -> None:
        self.amp.unscale(self.optimizer)
        weighted = self.step_weights.active
        self.step_weights.normalise(self.model.parameters(), loss_weight_total)
        local = sum(weight for _, weight, _ in losses)  # this worker's part of the step's weight
        total = loss_weight_total if weighted else sum(batch.global_size for batch in micro_batches)
        self.parallel.before_optimizer_step(self.model.parameters(), local, total)
        if self.regularizer is not None:  # the penalty's gradient, once per step, after averaging
            self.regularizer.add_gradients(self.model.named_parameters())
        if self.grad_norm is not None:
            self.parallel.clip_grad_norm(self.model.parameters(), self.grad_norm)
        if self.grad_clipping is not None:  # AllenNLP's order: the norm first, then each value
            _clamp_gradients(self.model.parameters(), self.grad_clipping)
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
    def _summarise(
        self, epoch: int, epoch_metrics: dict, is_best: bool, previous: dict, elapsed: float
    ) -> dict[str, Any]:
        metrics: dict[str, Any] = {"epoch": epoch, "training_duration": _duration(elapsed)}
        metrics.update(epoch_metrics)
        metrics.update(self.parallel.epoch_counters())
        if self.checkpoints.world_changes:
            metrics["world_changes"] = self.checkpoints.world_changes
        best_epoch = self.tracker.best_epoch
        metrics["best_epoch"] = best_epoch
        if is_best:
            best = {f"best_{k}": v for k, v in epoch_metrics.items() if k.startswith("validation_")}
        else:
            best = {k: v for k, v in previous.items() if k.startswith("best_validation_")}
        metrics.update(best)
        return metrics

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


def _epoch_shape(scheduler: Lazy[LearningRateScheduler], epochs: int, steps_per_epoch: int) -> dict[str, int]:
    """What a schedule defined per epoch (AllenNLP's ``slanted_triangular``) needs besides the total."""
    if not getattr(scheduler.cls, "wants_epoch_shape", False):
        return {}
    return {"trainer_epochs": epochs, "trainer_steps_per_epoch": steps_per_epoch}


def _clamp_gradients(parameters: Any, limit: float) -> None:
    """AllenNLP's ``grad_clipping``: each gradient value into [-limit, limit]. It clamps the step's
    averaged gradient (AllenNLP clamped each backward's), so any worker count makes the same update."""
    for parameter in parameters:
        if parameter.grad is not None:
            parameter.grad.clamp_(-limit, limit)


def _default_optimizer() -> Lazy[Optimizer]:
    return Lazy(lambda model_parameters: Optimizer.by_name("adam")(model_parameters), "adam")


def _nonfinite(losses: list[tuple[torch.Tensor, Any, int]]) -> torch.Tensor | bool:
    """Whether any loss of a real (non-placeholder) batch of this worker is NaN or infinite (a tensor
    on the losses' device: reading it waits for the agreement)."""
    real = [loss for loss, _, size in losses if size > 0]
    return ~torch.isfinite(torch.stack(real)).all() if real else False


def _grouped(batches: Iterator[Batch], size: int) -> Iterator[list[Batch]]:
    group: list[Batch] = []
    for batch in batches:
        group.append(batch)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _duration(seconds: float) -> str:
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"
