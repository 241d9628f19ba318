"""The training loop. It is the same on every worker; distribution reaches it through a few calls.

Each optimizer step covers ``num_gradient_accumulation_steps`` global batches. A worker's loss on
its slice is scaled by ``world_size × slice_size / step_samples`` before ``backward``: DDP divides
the summed gradient by the world size, so the update equals the single-process update on the same
global samples however they are split (uneven shares, empty slices and ``device_weights`` included).

A model whose loss is a mean over a varying count (masked tokens) returns that count as
``"loss_weight"``; see :mod:`distrain.training.loss_weighting` for how such steps stay exact.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import time
from pathlib import Path
from typing import Any, Iterator

import torch

from distrain.data.loader import Batch, DataLoader
from distrain.distributed.collectives import all_reduce_sum
from distrain.distributed.world import SINGLE, World
from distrain.lazy import Lazy
from distrain.metrics.metric import local_only
from distrain.models.model import Model
from distrain.registry import Registrable
from distrain.training.callback import Callback
from distrain.training.amp import AmpDtype, MixedPrecision
from distrain.training.checkpointing import Checkpointer, load_weights
from distrain.training.loss_weighting import StepWeights
from distrain.training.metric_tracker import MetricTracker
from distrain.training.optimizers import Optimizer
from distrain.training.schedulers import LearningRateScheduler

logger = logging.getLogger(__name__)


class Trainer(Registrable):
    default_implementation = "gradient_descent"
    runtime_args = ("model", "train_loader", "validation_loader", "serialization_dir", "world")

    def train(self) -> dict[str, Any]:
        raise NotImplementedError


class TrainingError(Exception):
    """Training cannot go on (e.g. a non-finite loss); the message says where it stopped."""


@Trainer.register("gradient_descent")
class GradientDescentTrainer(Trainer):
    def __init__(
        self,
        model: Model,
        train_loader: DataLoader,
        serialization_dir: Path,
        world: World = SINGLE,
        validation_loader: DataLoader | None = None,
        optimizer: Lazy[Optimizer] | None = None,
        learning_rate_scheduler: Lazy[LearningRateScheduler] | None = None,
        num_epochs: int = 20,
        validation_metric: str = "-loss",
        patience: int | None = None,
        grad_norm: float | None = None,
        num_gradient_accumulation_steps: int = 1,
        random_seed: int = 13,
        keep_checkpoints: int = 2,
        callbacks: list[Callback] | None = None,
        progress_bar: bool = True,
        use_amp: bool = False,
        amp_dtype: AmpDtype = "bfloat16",
    ) -> None:
        self.model = model
        self.train_loader = train_loader
        self.validation_loader = validation_loader
        self.serialization_dir = Path(serialization_dir)
        self.world = world
        self.num_epochs = num_epochs
        self.grad_norm = grad_norm
        self.accumulation = num_gradient_accumulation_steps
        self.random_seed = random_seed
        self.callbacks = callbacks or []
        self.progress_bar = progress_bar and world.is_primary
        self.tracker = MetricTracker(validation_metric, patience)
        self.checkpointer = Checkpointer(self.serialization_dir / "checkpoints", keep_checkpoints)
        self.device = torch.device(world.device)
        self.amp = MixedPrecision(use_amp, amp_dtype, self.device)
        self.step_weights = StepWeights()

        self.model.to(self.device)
        self.parallel_model = self._wrap(self.model)
        named = list(self.model.named_parameters())
        self.optimizer = (optimizer or _default_optimizer()).construct(model_parameters=named)
        self.steps_per_epoch = math.ceil(len(train_loader) / self.accumulation)
        self.scheduler = (
            learning_rate_scheduler.construct(
                optimizer=self.optimizer, num_training_steps=self.steps_per_epoch * num_epochs
            )
            if learning_rate_scheduler
            else None
        )
        self.step = 0
        self.start_epoch = 0

    def _wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        if not self.world.is_distributed:
            return model
        from torch.nn.parallel import DistributedDataParallel

        device_ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=device_ids)

    # ------------------------------------------------------------------------------- the loop
    def train(self) -> dict[str, Any]:
        started = time.monotonic()
        metrics: dict[str, Any] = {}
        for callback in self.callbacks:
            callback.on_start(self)
        for epoch in range(self.start_epoch, self.num_epochs):
            epoch_metrics = {f"training_{k}": v for k, v in self._train_epoch(epoch).items()}
            if self.validation_loader is not None:
                epoch_metrics.update({f"validation_{k}": v for k, v in self.evaluate(self.validation_loader).items()})
            tracked = {k.partition("_")[2]: v for k, v in epoch_metrics.items() if k.startswith("validation_")}
            is_best = self.tracker.update(epoch, tracked or {k.partition("_")[2]: v for k, v in epoch_metrics.items()})
            if self.scheduler is not None:
                self.scheduler.step_epoch(tracked.get(self.tracker.name))
            metrics = self._summarise(epoch, epoch_metrics, is_best, metrics, time.monotonic() - started)
            self._save(epoch, metrics, is_best)
            for callback in self.callbacks:
                callback.on_epoch(self, epoch, metrics)
            if self.tracker.should_stop():
                logger.info("stopping early: no improvement in %d epochs", self.tracker.patience)
                break
        if self.checkpointer.best_weights.exists() and self.validation_loader is not None:
            load_weights(self.model, self.checkpointer.best_weights)
        for callback in self.callbacks:
            callback.on_end(self, metrics)
        return metrics

    def _train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        self.train_loader.set_epoch(epoch)
        loss_sum = torch.zeros((), dtype=torch.float64)
        loss_weight = torch.zeros((), dtype=torch.float64)
        samples = 0
        progress = self._progress(epoch)
        epoch_started = last_shown = time.monotonic()
        for micro_batches in _grouped(iter(self.train_loader), self.accumulation):
            step_samples = sum(batch.global_size for batch in micro_batches)
            for position, batch in enumerate(micro_batches):
                last = position == len(micro_batches) - 1
                loss, weight = self._forward_backward(batch, step_samples, sync=last)
                loss_sum += loss * weight
                loss_weight += weight
                samples += batch.size
            self._optimizer_step()
            if not math.isfinite(float(loss)):
                raise TrainingError(f"loss is {float(loss)} at step {self.step} (epoch {epoch})")
            shown_loss = None
            if progress is not None:
                progress.update(1)
                if time.monotonic() - last_shown > 0.5:
                    last_shown = time.monotonic()
                    shown_loss = float(loss_sum / loss_weight.clamp(min=1e-12))
                    speed = samples * self.world.size / (last_shown - epoch_started)
                    with local_only():
                        metrics = _short(self.model.get_metrics())
                    progress.set_postfix(loss=f"{shown_loss:.4f}", **metrics, examples_per_s=f"{speed:.0f}")
            for callback in self.callbacks:
                callback.on_step(self, self.step, shown_loss)
        if progress is not None:
            progress.close()
        totals = all_reduce_sum(torch.stack([loss_sum, loss_weight]))
        return {"loss": float(totals[0] / totals[1].clamp(min=1e-12)), **self.model.get_metrics(reset=True)}

    def _forward_backward(self, batch: Batch, step_samples: int, sync: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Backward this worker's share of the step's loss; return (mean loss, what it averages over)."""
        inputs = _to_device(batch.inputs, self.device)
        no_sync = self.parallel_model.no_sync if (not sync and self.world.is_distributed) else contextlib.nullcontext
        frozen = self.model.metrics_frozen if batch.size == 0 else contextlib.nullcontext
        with no_sync(), frozen():
            with self.amp.autocast():
                output = self.parallel_model(**inputs)
            loss = output["loss"]
            if "loss_weight" in output:
                weight = self.step_weights.add(output["loss_weight"], batch.size, step_samples)
                scale = self.world.size * float(weight) / step_samples
            else:
                weight = torch.tensor(float(batch.size), dtype=torch.float64)
                scale = self.world.size * batch.size / step_samples
            self.amp.backward(loss if scale == 1.0 else loss * scale)
        return loss.detach().double().cpu(), weight

    def _optimizer_step(self) -> None:
        self.amp.unscale(self.optimizer)
        self.step_weights.normalise(self.model.parameters())
        if self.grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_norm)
        self.amp.step(self.optimizer)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scheduler is not None:
            self.scheduler.step()
        self.step += 1

    @torch.inference_mode()
    def evaluate(self, loader: DataLoader) -> dict[str, float]:
        """Loss and metrics over ``loader``, each instance counted once across all workers."""
        self.model.eval()
        loss_sum = torch.zeros((), dtype=torch.float64)
        samples = 0
        for batch in loader:
            if batch.size == 0:
                continue
            with self.amp.autocast():
                output = self.model(**_to_device(batch.inputs, self.device))
            if "loss" in output:
                weight = output["loss_weight"].double().cpu() if "loss_weight" in output else batch.size
                loss_sum += output["loss"].double().cpu() * weight
                samples += weight
        totals = all_reduce_sum(torch.stack([loss_sum, torch.as_tensor(samples, dtype=torch.float64).cpu()]))
        metrics = self.model.get_metrics(reset=True)
        if totals[1] > 0:
            metrics = {"loss": float(totals[0] / totals[1]), **metrics}
        return metrics

    # ------------------------------------------------------------------------------ bookkeeping
    def _summarise(
        self, epoch: int, epoch_metrics: dict, is_best: bool, previous: dict, elapsed: float
    ) -> dict[str, Any]:
        metrics: dict[str, Any] = {"epoch": epoch, "training_duration": _duration(elapsed)}
        metrics.update(epoch_metrics)
        best_epoch = self.tracker.best_epoch
        metrics["best_epoch"] = best_epoch
        if is_best:
            best = {f"best_{k}": v for k, v in epoch_metrics.items() if k.startswith("validation_")}
        else:
            best = {k: v for k, v in previous.items() if k.startswith("best_validation_")}
        metrics.update(best)
        return metrics

    def _save(self, epoch: int, metrics: dict[str, Any], is_best: bool) -> None:
        if not self.world.is_primary:
            return
        (self.serialization_dir / f"metrics_epoch_{epoch}.json").write_text(json.dumps(metrics, indent=2))
        (self.serialization_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
        if is_best:
            self.checkpointer.save_best(self.model)
        self.checkpointer.save(epoch, self.model, self.training_state(epoch))

    def training_state(self, epoch: int) -> dict[str, Any]:
        return {
            "epoch": epoch,
            "step": self.step,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler else None,
            "amp": self.amp.state_dict(),
            "tracker": self.tracker.state_dict(),
            "callbacks": [callback.state_dict() for callback in self.callbacks],
        }

    def _progress(self, epoch: int):
        if not self.progress_bar:
            return None
        from tqdm import tqdm

        return tqdm(total=self.steps_per_epoch, desc=f"epoch {epoch + 1}/{self.num_epochs}", unit="step",
                    leave=False, dynamic_ncols=True)


def _default_optimizer() -> Lazy[Optimizer]:
    return Lazy(lambda model_parameters: Optimizer.by_name("adam")(model_parameters), "adam")


def _grouped(batches: Iterator[Batch], size: int) -> Iterator[list[Batch]]:
    group: list[Batch] = []
    for batch in batches:
        group.append(batch)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def _to_device(inputs: dict[str, Any], device: torch.device) -> dict[str, Any]:
    if device.type == "cpu":
        return inputs
    return {k: v.to(device, non_blocking=True) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}


def _short(metrics: dict[str, float]) -> dict[str, str]:
    return {name: f"{value:.4f}" for name, value in metrics.items() if isinstance(value, float)}


def _duration(seconds: float) -> str:
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"
