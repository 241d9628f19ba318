"""Which epoch was best by ``validation_metric`` (``"+accuracy"``, ``"-loss"``), and when to stop."""

from __future__ import annotations

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
