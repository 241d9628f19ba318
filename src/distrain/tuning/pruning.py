"""``optuna_pruning``: report each epoch's validation metric to the study and stop a pruned trial.

``distrain tune`` adds this callback to every trial's ``trainer.callbacks``. The primary worker reports
to the study's storage and asks the pruner; the decision is broadcast so every worker stops after the
same epoch. A pruned run ends normally (metrics, best weights and archive are written) and leaves
``pruned.json`` in its folder, which is how ``distrain tune`` and the user tell it was pruned.
"""

from __future__ import annotations

import json
import math
from typing import Any

from distrain.training.callback import Callback

PRUNED_FILE = "pruned.json"


@Callback.register("optuna_pruning")
class OptunaPruningCallback(Callback):
    """Reports each epoch's validation metric to an Optuna study and stops a trial its pruner prunes (``distrain
    tune`` adds it to every trial; every worker stops after the same epoch)."""

    def __init__(self, storage: str, study_name: str, trial_id: int, pruner: str = "median",
                 max_epochs: int | None = None) -> None:
        self.storage = storage
        self.study_name = study_name
        self.trial_id = trial_id
        self.pruner = pruner
        self.max_epochs = max_epochs
        self.trial = None

    def on_start(self, trainer) -> None:
        if not trainer.world.is_primary:
            return
        import optuna

        from distrain.tuning.study import make_pruner, open_storage

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.load_study(
            study_name=self.study_name, storage=open_storage(self.storage, heartbeat=False),
            pruner=make_pruner(self.pruner, self.max_epochs),
        )
        self.trial = optuna.trial.Trial(study, self.trial_id)

    def on_epoch(self, trainer, epoch: int, metrics: dict[str, Any]) -> None:
        from distrain.distributed.collectives import broadcast_object

        prune = False
        if self.trial is not None:
            name = trainer.tracker.name
            value = metrics.get(f"validation_{name}", metrics.get(f"training_{name}"))
            if value is not None and math.isfinite(value):
                self.trial.report(float(value), epoch)
                prune = self.trial.should_prune()
        if broadcast_object(prune):
            if trainer.world.is_primary:
                record = {"epoch": epoch, "epochs_trained": epoch + 1, "value": value, "metric": name}
                (trainer.serialization_dir / PRUNED_FILE).write_text(json.dumps(record, indent=2))
            trainer.stop_reason = f"pruned by the study after epoch {epoch} ({name} {value:.4f})" if trainer.world.is_primary else "pruned"
