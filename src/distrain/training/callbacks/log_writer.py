"""AllenNLP's ``LogWriterCallback``: what its ``tensorboard`` and ``wandb`` callbacks log, and when, on distrain's
callback hooks. A subclass says where a scalar or a histogram goes (``log_scalars``, ``log_tensors``).

Every ``summary_interval`` optimizer steps, under ``train/``: ``batch_loss`` (that step's loss on rank 0) and its
moving average over the last ``batch_loss_moving_average_count`` logged ones, the model's running metrics as
``batch_<name>``; with ``should_log_parameter_statistics`` the mean and standard deviation of every parameter and
of its gradient (``parameter_mean/``, ``parameter_std/``, ``gradient_mean/``, ``gradient_std/``); with
``should_log_learning_rate`` each parameter's learning rate (``learning_rate/``). Every ``distribution_interval``
steps: parameter histograms and each parameter's update norm over its norm (``gradient_update/``). Every
``batch_size_interval`` steps of an epoch: ``batch_size`` and ``mean_batch_size``. After each epoch: the
epoch's training and validation metrics, with the epoch. Only rank 0 logs. AllenNLP's activation histograms
(modules flagged ``should_log_activations``) are not logged.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import torch

from distrain.config.constraints import PositiveInt
from distrain.metrics.metric import local_only
from distrain.training.callback import Callback

#: per-epoch entries of a run's metrics that are not metrics (AllenNLP's get_train_and_validation_metrics)
_NOT_METRICS = {"duration", "start_epoch", "batches"}


def train_and_validation_metrics(metrics: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """An epoch's ``training_*`` and ``validation_*`` numbers, each without its prefix."""
    split: tuple[dict[str, float], dict[str, float]] = ({}, {})
    for key, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        for prefix, into in (("training_", split[0]), ("validation_", split[1])):
            name = key.removeprefix(prefix)
            if name != key and name not in _NOT_METRICS and "_memory_MB" not in name:
                into[name] = value
    return split


class LogWriterCallback(Callback):
    """AllenNLP's keys; ``serialization_dir`` (which AllenNLP passes itself) is accepted and the run's folder used."""

    def __init__(self, serialization_dir: str | None = None, summary_interval: PositiveInt = 100,
                 distribution_interval: PositiveInt | None = None, batch_size_interval: PositiveInt | None = None,
                 should_log_parameter_statistics: bool = True, should_log_learning_rate: bool = False,
                 batch_loss_moving_average_count: PositiveInt = 100) -> None:
        # every how many steps: the scalars, the parameter and update distributions, the batch sizes
        self.summary_interval, self.distribution_interval = summary_interval, distribution_interval
        self.batch_size_interval = batch_size_interval
        self.should_log_parameter_statistics = should_log_parameter_statistics
        self.should_log_learning_rate = should_log_learning_rate
        self.batch_losses: deque[float] = deque(maxlen=batch_loss_moving_average_count)
        self.trainer: Any = None
        self._before_step: tuple[Any, float, float] | None = None  # (epoch position, loss sum, loss weight)
        self._gradients: dict[str, dict[str, float]] = {}
        self._parameters_before: dict[str, torch.Tensor] | None = None
        self._epoch_samples: tuple[Any, int, int] | None = None  # (epoch position, samples at its start, steps)

    # ------------------------------------------------------------------ what a subclass writes
    def log_scalars(self, scalars: dict[str, float], log_prefix: str = "", epoch: int | None = None) -> None:
        raise NotImplementedError

    def log_tensors(self, tensors: dict[str, torch.Tensor], log_prefix: str = "", epoch: int | None = None) -> None:
        raise NotImplementedError

    def open(self, trainer: Any) -> None:
        """Open the writers (rank 0, when training starts)."""

    def close(self) -> None:
        """Close the writers (rank 0, when training ends or fails)."""

    # ----------------------------------------------------------------------------- hooks
    def on_start(self, trainer: Any) -> None:
        self.trainer = trainer
        if trainer.world.is_primary:
            self.open(trainer)

    def on_gradients(self, trainer: Any, step: int) -> None:
        if not trainer.world.is_primary:
            return
        if self.should_log_parameter_statistics and step % self.summary_interval == 0:
            self._gradients = _gradient_statistics(trainer.model)
        if self.distribution_interval and step % self.distribution_interval == 0:
            self._parameters_before = {name: parameter.detach().cpu().clone()
                                       for name, parameter in trainer.model.named_parameters()}

    def on_step(self, trainer: Any, step: int, loss: float | None) -> None:
        if not trainer.world.is_primary:
            return
        position = trainer.position
        sums = (position, float(position.loss_sum), float(position.loss_weight))  # read on rank 0 only
        if step % self.summary_interval == 0:
            self._log_summary(trainer, position, self._step_loss(sums, getattr(trainer, "accumulation", 1)))
        self._before_step = sums
        if self.distribution_interval and step % self.distribution_interval == 0:
            self._log_distributions(trainer.model)
        if self.batch_size_interval:
            self._log_batch_sizes(position)

    def on_epoch(self, trainer: Any, epoch: int, metrics: dict[str, Any]) -> None:
        if not trainer.world.is_primary:
            return
        training, validation = train_and_validation_metrics(metrics)
        self.log_scalars(training, log_prefix="train", epoch=epoch)
        self.log_scalars(validation, log_prefix="validation", epoch=epoch)

    def on_end(self, trainer: Any, metrics: dict[str, Any]) -> None:
        if trainer.world.is_primary:
            self.close()

    def on_failure(self, trainer: Any, error: BaseException) -> None:
        if trainer.world.is_primary:
            self.close()

    # --------------------------------------------------------------------------- what is logged
    def _log_summary(self, trainer: Any, position: Any, batch_loss: float | None) -> None:
        scalars: dict[str, float] = {}
        if batch_loss is not None:
            self.batch_losses.append(batch_loss)
            scalars["batch_loss"] = batch_loss
            scalars["batch_loss_mov_avg"] = sum(self.batch_losses) / len(self.batch_losses)
        with local_only():
            running = trainer.model.get_metrics()
        scalars.update({f"batch_{name}": value for name, value in running.items()
                        if isinstance(value, (int, float)) and not isinstance(value, bool)})
        self.log_scalars(scalars, log_prefix="train")
        if self.should_log_parameter_statistics:
            means, deviations = _parameter_statistics(trainer.model)
            self.log_scalars(means, log_prefix="parameter_mean")
            self.log_scalars(deviations, log_prefix="parameter_std")
            for prefix, values in self._gradients.items():
                self.log_scalars(values, log_prefix=prefix)
            self._gradients = {}
        if self.should_log_learning_rate:
            self.log_scalars(_learning_rates(trainer.model, trainer.optimizer), log_prefix="learning_rate")

    def _step_loss(self, sums: tuple[Any, float, float], accumulation: int) -> float | None:
        """The loss of the step just taken on this worker: the difference of the epoch's running sums since the
        step before (the sums themselves after an epoch's first step; None after a resumed one's)."""
        position, total, weight = sums
        if self._before_step is not None and self._before_step[0] is position:
            total, weight = total - self._before_step[1], weight - self._before_step[2]
        elif position.batches > accumulation:
            return None
        return total / weight if weight > 0 else None

    def _log_distributions(self, model: torch.nn.Module) -> None:
        parameters = dict(model.named_parameters())
        wanted = getattr(model, "get_parameters_for_histogram_logging", None)
        names = set(wanted()) if wanted is not None else set(parameters)
        self.log_tensors({name: parameters[name] for name in parameters if name in names},
                         log_prefix="parameter_histogram")
        if self._parameters_before is not None:
            ratios = {name: float(torch.norm((self._parameters_before[name] - parameter.detach().cpu()).view(-1))
                                  / (torch.norm(parameter.detach().cpu().view(-1)) + 1e-13))
                      for name, parameter in parameters.items()}
            self.log_scalars(ratios, log_prefix="gradient_update")
            self._parameters_before = None

    def _log_batch_sizes(self, position: Any) -> None:
        if self._epoch_samples is None or self._epoch_samples[0] is not position:
            self._epoch_samples = (position, 0, 0)
        _, previous, steps = self._epoch_samples
        steps += 1
        self._epoch_samples = (position, position.samples, steps)
        if steps % self.batch_size_interval == 0:
            self.log_scalars({"batch_size": position.samples - previous, "mean_batch_size": position.samples / steps},
                             log_prefix="train")


def _parameter_statistics(model: torch.nn.Module) -> tuple[dict[str, float], dict[str, float]]:
    means, deviations = {}, {}
    for name, parameter in model.named_parameters():
        if parameter.numel() > 0:
            means[name] = float(parameter.detach().mean())
        if parameter.numel() > 1:
            deviations[name] = float(parameter.detach().std())
    return means, deviations


def _gradient_statistics(model: torch.nn.Module) -> dict[str, dict[str, float]]:
    means, deviations = {}, {}
    for name, parameter in model.named_parameters():
        if parameter.grad is None:
            continue
        gradient = parameter.grad._values() if parameter.grad.is_sparse else parameter.grad
        if gradient.numel() > 0:
            means[name] = float(gradient.mean())
        if gradient.numel() > 1:
            deviations[name] = float(gradient.std())
    return {"gradient_mean": means, "gradient_std": deviations}


def _learning_rates(model: torch.nn.Module, optimizer: Any) -> dict[str, float]:
    names = {parameter: name for name, parameter in model.named_parameters()}
    rates = {}
    for group in getattr(optimizer, "param_groups", []):
        for parameter in group["params"]:
            if "lr" in group and parameter in names:
                rates[names[parameter]] = group["lr"] * float(parameter.requires_grad)
    return rates
