"""Track a run in MLflow: the resolved config as parameters, per-epoch metrics, the archive, the status.

``{"type": "mlflow", "tracking_uri": "sqlite:///runs/mlflow.db", "experiment_name": "digits"}``. Only
rank 0 talks to MLflow. The MLflow run id is part of this callback's checkpointed state, so a run
resumed with ``--recover`` continues the same MLflow run (its status goes back to RUNNING). A run
that ends is FINISHED; one stopped by a signal (pre-empted, resumable) is KILLED; one that failed is
FAILED. Parameters are the config flattened to dotted keys (``trainer.optimizer.lr``), logged once.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from distrain.training.callback import Callback
from distrain.training.callbacks.optional_package import import_for

logger = logging.getLogger(__name__)

#: MLflow's limit on one parameter value, and on entries per log_batch call
MAX_PARAM_LENGTH = 6000
BATCH = 100


def flatten(config: Any, prefix: str = "") -> dict[str, str]:
    """``{"trainer": {"optimizer": {"lr": 0.1}}}`` -> ``{"trainer.optimizer.lr": "0.1"}``; list items
    that are objects are numbered (``trainer.callbacks.0.type``), lists of plain values stay JSON."""
    if isinstance(config, dict):
        flat: dict[str, str] = {}
        for key, value in config.items():
            flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    if isinstance(config, list) and any(isinstance(item, (dict, list)) for item in config):
        flat = {}
        for index, value in enumerate(config):
            flat.update(flatten(value, f"{prefix}.{index}"))
        return flat
    text = config if isinstance(config, str) else json.dumps(config)
    return {prefix: text[:MAX_PARAM_LENGTH]}


@Callback.register("mlflow")
class MlflowCallback(Callback):
    """Log params, per-epoch metrics, the archive and the run's status to an MLflow tracking server."""

    def __init__(
        self,
        tracking_uri: str,
        experiment_name: str = "distrain",
        run_name: str | None = None,
        artifact_location: str | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        self.tracking_uri = tracking_uri
        self.experiment_name = experiment_name
        self.run_name = run_name
        self.artifact_location = artifact_location
        self.tags = tags or {}
        self.run_id: str | None = None
        self.client = None

    # ------------------------------------------------------------------------------- the hooks
    def on_start(self, trainer) -> None:
        if not trainer.world.is_primary:
            return
        tracking = import_for("mlflow", "mlflow.tracking", "mlflow", "mlflow")
        self.client = tracking.MlflowClient(tracking_uri=self.tracking_uri)
        if self.run_id is not None:  # resumed from a checkpoint: the same MLflow run goes on
            self.client.update_run(self.run_id, status="RUNNING")
            logger.info("mlflow: continuing run %s", self.run_id)
            return
        experiment = self.client.get_experiment_by_name(self.experiment_name)
        experiment_id = (experiment.experiment_id if experiment is not None else
                         self.client.create_experiment(self.experiment_name, artifact_location=self.artifact_location))
        run = self.client.create_run(experiment_id, run_name=self.run_name or trainer.serialization_dir.name,
                                     tags={"distrain.serialization_dir": str(trainer.serialization_dir), **self.tags})
        self.run_id = run.info.run_id
        self._log_params(trainer.serialization_dir / "config.json")
        logger.info("mlflow: run %s in experiment %r at %s", self.run_id, self.experiment_name, self.tracking_uri)

    def on_epoch(self, trainer, epoch: int, metrics: dict[str, Any]) -> None:
        if self.client is None:
            return
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        entries = [Metric(key, float(value), now, epoch) for key, value in metrics.items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool)]
        for start in range(0, len(entries), BATCH):
            self.client.log_batch(self.run_id, metrics=entries[start : start + BATCH])

    def on_end(self, trainer, metrics: dict[str, Any]) -> None:
        self._terminate("FINISHED")

    def on_failure(self, trainer, error: BaseException) -> None:
        from distrain.job.stop import Preempted

        self._terminate("KILLED" if isinstance(error, Preempted) else "FAILED")

    def on_archive(self, trainer, archive: Path) -> None:
        if self.client is not None:
            self.client.log_artifact(self.run_id, str(archive))

    # ------------------------------------------------------------------------------- the state
    def state_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.run_id = state.get("run_id")

    # ---------------------------------------------------------------------------------- helpers
    def _log_params(self, config_file: Path) -> None:
        from mlflow.entities import Param

        if not config_file.is_file():
            return
        params = [Param(key, value) for key, value in sorted(flatten(json.loads(config_file.read_text())).items())]
        for start in range(0, len(params), BATCH):
            self.client.log_batch(self.run_id, params=params[start : start + BATCH])

    def _terminate(self, status: str) -> None:
        if self.client is None:
            return
        try:
            self.client.set_terminated(self.run_id, status)
        except Exception as error:  # noqa: BLE001 - tracking must not hide the run's own outcome
            logger.warning("mlflow: could not mark run %s %s: %s", self.run_id, status, error)
