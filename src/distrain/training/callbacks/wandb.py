"""AllenNLP's ``wandb`` callback: its log writer's scalars and histograms (:mod:`.log_writer`) in a Weights & Biases
run, offline unless ``wandb_kwargs`` or ``WANDB_MODE`` say otherwise (nothing leaves the machine by default; ``wandb
sync`` uploads the run's ``wandb/`` folder later). The ``wandb`` package is the user's to install: a config naming
this callback without it is refused in one line before anything runs."""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt
from distrain.config.errors import Problem
from distrain.training.callback import Callback
from distrain.training.callbacks.log_writer import LogWriterCallback

MISSING = "needs the wandb package, which is not installed: pip install wandb"


@Callback.register("wandb")
class WandBCallback(LogWriterCallback):
    """AllenNLP's keys. The run's config (``config.json``) is the W&B run's config; ``files_to_save`` (relative
    to the run folder) are saved with it; ``watch_model`` has W&B watch the model. The W&B run id is checkpointed,
    so a recovered run continues the same W&B run."""

    def __init__(self, serialization_dir: str | None = None, summary_interval: PositiveInt = 100,
                 distribution_interval: PositiveInt | None = None, batch_size_interval: PositiveInt | None = None,
                 should_log_parameter_statistics: bool = True, should_log_learning_rate: bool = False,
                 project: str | None = None, entity: str | None = None, group: str | None = None,
                 name: str | None = None, notes: str | None = None, tags: list[str] | None = None,
                 watch_model: bool = True, files_to_save: tuple[str, ...] = ("config.json", "out_worker0.log"),
                 wandb_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__(serialization_dir, summary_interval, distribution_interval, batch_size_interval,
                         should_log_parameter_statistics, should_log_learning_rate)
        self.init_arguments = {"project": project, "entity": entity, "group": group, "name": name, "notes": notes,
                               "tags": tags, **(wandb_kwargs or {})}
        self.watch_model, self.files_to_save = watch_model, files_to_save
        self.run_id: str | None = None
        self.resumed = False
        self.wandb: Any = None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        return [Problem("", MISSING)] if importlib.util.find_spec("wandb") is None else []

    def open(self, trainer: Any) -> None:
        try:
            self.wandb = importlib.import_module("wandb")
        except ImportError as error:
            raise RuntimeError(f"the wandb callback {MISSING}") from error
        import json

        config_file = trainer.serialization_dir / "config.json"
        arguments = {"mode": os.environ.get("WANDB_MODE", "offline"), "dir": str(trainer.serialization_dir),
                     "config": json.loads(config_file.read_text()) if config_file.exists() else None,
                     **self.init_arguments}
        self.run_id = self.run_id or self.wandb.util.generate_id()
        self.wandb.init(id=self.run_id, resume="allow" if self.resumed else None, **arguments)
        for path in self.files_to_save:
            self.wandb.save(str(trainer.serialization_dir / path), base_path=str(trainer.serialization_dir))
        if self.watch_model:
            self.wandb.watch(trainer.model)

    def _log(self, values: dict[str, Any], log_prefix: str, epoch: int | None) -> None:
        values = {f"{log_prefix}/{key}" if log_prefix else key: value for key, value in values.items()}
        if epoch is not None:
            values["epoch"] = epoch
        self.wandb.log(values, step=self.trainer.step)

    def log_scalars(self, scalars: dict[str, float], log_prefix: str = "", epoch: int | None = None) -> None:
        self._log(scalars, log_prefix, epoch)

    def log_tensors(self, tensors: dict[str, torch.Tensor], log_prefix: str = "", epoch: int | None = None) -> None:
        self._log({key: self.wandb.Histogram(value.detach().cpu().float().numpy().flatten())
                   for key, value in tensors.items()}, log_prefix, epoch)

    def close(self) -> None:
        if self.wandb is not None:
            self.wandb.finish()
            self.wandb = None

    def state_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.run_id, self.resumed = state.get("run_id"), True
