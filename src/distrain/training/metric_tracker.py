"""Which epoch was best by ``validation_metric`` (``"+accuracy"``, ``"-loss"``), when to stop, and each epoch's
summary (``metrics.json``), which carries the best epoch's validation metrics."""

from __future__ import annotations

import datetime
from typing import Annotated, Any

from distrain.config.constraints import Must

#: a metric name led by its direction: ``+`` higher is better, ``-`` lower is better
ValidationMetric = Annotated[
    str, Must("start with + or -", lambda name: len(name) > 1 and name[0] in "+-")
]


class MetricTracker:
    def __init__(self, validation_metric: ValidationMetric = "-loss", patience: int | None = None) -> None:
        self.name = validation_metric[1:]
        self.higher_is_better = validation_metric[0] == "+"
        self.patience = patience
        self.best_value: float | None = None
        self.best_epoch: int | None = None
        self.epochs_without_improvement = 0

    def update(self, epoch: int, metrics: dict[str, Any]) -> bool:
        """Record ``metrics`` of ``epoch``; return whether it is the best so far. A name the model does not report
        is one line naming the key, not a KeyError (allennlp-models' ``semantic_dependencies.jsonnet`` names "LAS",
        which its ``graph_parser`` does not give)."""
        if self.name not in metrics:
            from distrain.errors import ConfigError, Problem

            raise ConfigError([Problem("trainer.validation_metric", f"{self.name!r} is not among the validation "
                                                                    f"metrics ({', '.join(sorted(metrics))})")])
        value = metrics[self.name]
        better = self.best_value is None or (
            value > self.best_value if self.higher_is_better else value < self.best_value
        )
        if better:
            self.best_value, self.best_epoch = value, epoch
            self.epochs_without_improvement = 0
        else:
            self.epochs_without_improvement += 1
        return better

    def summary(self, epoch: int, elapsed: float, epoch_metrics: dict[str, Any], counters: dict[str, Any],
                is_best: bool, previous: dict[str, Any]) -> dict[str, Any]:
        """``epoch``'s metrics, the run's ``counters`` and the best epoch's validation metrics as ``best_*`` (this
        epoch's when ``is_best``, else those of the ``previous`` summary)."""
        metrics: dict[str, Any] = {"epoch": epoch, "training_duration": _duration(elapsed), **epoch_metrics, **counters,
                                   "best_epoch": self.best_epoch}
        if is_best:
            metrics.update({f"best_{k}": v for k, v in epoch_metrics.items() if k.startswith("validation_")})
        else:
            metrics.update({k: v for k, v in previous.items() if k.startswith("best_validation_")})
        return metrics

    def should_stop(self) -> bool:
        return self.patience is not None and self.epochs_without_improvement >= self.patience

    def state_dict(self) -> dict[str, Any]:
        return {
            "best_value": self.best_value,
            "best_epoch": self.best_epoch,
            "epochs_without_improvement": self.epochs_without_improvement,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best_value = state["best_value"]
        self.best_epoch = state["best_epoch"]
        self.epochs_without_improvement = state["epochs_without_improvement"]


def _duration(seconds: float) -> str:
    """AllenNLP's form (``str`` of a ``timedelta``, e.g. ``0:03:37.081524``): to the microsecond, so two epochs'
    durations subtract to an epoch's time, and a tool that reads AllenNLP's ``metrics_epoch_N.json`` reads ours."""
    return str(datetime.timedelta(seconds=seconds))
