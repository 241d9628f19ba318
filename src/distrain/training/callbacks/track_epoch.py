"""AllenNLP's ``track_epoch_callback``: the model's ``epoch`` attribute holds the number of completed epochs, so its
``forward`` can read it (0 while the first epoch trains)."""

from __future__ import annotations

from typing import Any

from distrain.training.callback import Callback


@Callback.register("track_epoch_callback")
class TrackEpochCallback(Callback):
    """``serialization_dir``, which AllenNLP passes every callback, is accepted and unused."""

    def __init__(self, serialization_dir: str | None = None) -> None:
        self.serialization_dir = serialization_dir

    def on_start(self, trainer: Any) -> None:
        trainer.model.epoch = trainer.position.epoch  # 0, or the epochs a recovered run had completed

    def on_epoch(self, trainer: Any, epoch: int, metrics: dict[str, Any]) -> None:
        trainer.model.epoch = epoch + 1
