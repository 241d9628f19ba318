"""AllenNLP's ``tensorboard`` callback: its log writer's scalars and histograms (:mod:`.log_writer`) in TensorBoard
event files under the run's ``log/train`` and ``log/validation``, as AllenNLP writes them (step: the optimizer
step, or the epoch, plus one)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt
from distrain.training.callback import Callback
from distrain.training.callbacks.log_writer import LogWriterCallback
from distrain.training.callbacks.optional_package import import_for


@Callback.register("tensorboard")
class TensorBoardCallback(LogWriterCallback):
    """AllenNLP's keys and defaults (parameter statistics off); ``log_every`` is distrain's older name for
    ``summary_interval``."""

    def __init__(self, serialization_dir: str | None = None, summary_interval: PositiveInt = 100,
                 distribution_interval: PositiveInt | None = None, batch_size_interval: PositiveInt | None = None,
                 should_log_parameter_statistics: bool = False, should_log_learning_rate: bool = False,
                 log_every: PositiveInt | None = None) -> None:
        super().__init__(serialization_dir, log_every or summary_interval, distribution_interval, batch_size_interval,
                         should_log_parameter_statistics, should_log_learning_rate)
        self.writers: dict[str, Any] = {}

    def open(self, trainer: Any) -> None:
        tensorboard = import_for("tensorboard", "torch.utils.tensorboard", "the tensorboard package", "tensorboard")
        for split in ("train", "validation"):
            folder = trainer.serialization_dir / "log" / split
            folder.mkdir(parents=True, exist_ok=True)
            self.writers[split] = tensorboard.SummaryWriter(str(folder))

    def _writer(self, log_prefix: str) -> Any:
        return self.writers.get("validation" if log_prefix.startswith("validation") else "train")

    def log_scalars(self, scalars: dict[str, float], log_prefix: str = "", epoch: int | None = None) -> None:
        writer, step = self._writer(log_prefix), (epoch if epoch is not None else self.trainer.step) + 1
        for key, value in scalars.items():
            writer.add_scalar(f"{log_prefix}/{key}" if log_prefix else key, value, step)

    def log_tensors(self, tensors: dict[str, torch.Tensor], log_prefix: str = "", epoch: int | None = None) -> None:
        writer, step = self._writer(log_prefix), (epoch if epoch is not None else self.trainer.step) + 1
        for key, values in tensors.items():
            writer.add_histogram(f"{log_prefix}/{key}" if log_prefix else key,
                                 values.detach().cpu().float().numpy().flatten(), step)

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()
        self.writers = {}
