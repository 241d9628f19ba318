"""AllenNLP's ``console_logger``: on rank 0, the first batch's inputs when training starts (``should_log_inputs``:
each tensor's shape and a few values, each list's length, each string's start) and, after every epoch, a table of
its training and validation metrics, in the run's log."""

from __future__ import annotations

import logging
from typing import Any

import torch

from distrain.training.callback import Callback
from distrain.training.callbacks.log_writer import train_and_validation_metrics

logger = logging.getLogger(__name__)


@Callback.register("console_logger")
class ConsoleLoggerCallback(Callback):
    """The first batch's inputs (``should_log_inputs``) and each epoch's metrics table, logged on rank 0;
    ``serialization_dir``, which AllenNLP passes every callback, is accepted and unused."""

    def __init__(self, serialization_dir: str | None = None, should_log_inputs: bool = True) -> None:
        self.serialization_dir = serialization_dir
        self.should_log_inputs = should_log_inputs

    def on_start(self, trainer: Any) -> None:
        fresh = trainer.position.epoch == 0 and trainer.position.batches == 0
        if not (self.should_log_inputs and fresh and trainer.world.is_primary):
            return
        if getattr(trainer.train_loader, "dataset", None) is None:
            return  # a streamed split: its first batch is not read twice
        first = next(iter(trainer.train_loader), None)
        if first is not None:
            logger.info("Batch inputs")
            log_fields(first.inputs, "batch_input")

    def on_epoch(self, trainer: Any, epoch: int, metrics: dict[str, Any]) -> None:
        if not trainer.world.is_primary:
            return
        training, validation = train_and_validation_metrics(metrics)
        names = sorted(set(training) | set(validation))
        if not names:
            return
        width = max(len(name) for name in names)
        logger.info("%s |  %-10s", "Training".rjust(width + 13), "Validation")
        for name in names:
            shown = [f"{split[name]:8.3f}" if name in split else f"{'N/A':>8}" for split in (training, validation)]
            logger.info("%s |  %s  |  %s", name.ljust(width), *shown)


def log_fields(fields: dict[str, Any], prefix: str) -> None:
    for key, value in fields.items():
        name = f"{prefix}/{key}"
        if isinstance(value, dict):
            log_fields(value, name)
        elif isinstance(value, torch.Tensor):
            values = value.flatten()[:4].tolist()
            logger.info("%s (Shape: %s) %s%s", name, " x ".join(str(size) for size in value.shape), values,
                        " ..." if value.numel() > 4 else "")
        elif isinstance(value, list):
            logger.info('Field : "%s" : (Length %d of type "%s")', name, len(value),
                        type(value[0]).__name__ if value else "-")
        elif isinstance(value, str):
            logger.info('Field : "%s" : "%.20s ..."', name, value)
        else:
            logger.info('Field : "%s" : %s', name, value)
