"""AllenNLP's ``should_validate_callback``: validate only from epoch ``validation_start`` on (counted from 0), and
then every ``validation_interval`` epochs. An epoch left unvalidated leaves early stopping and the best weights as
they were; the decision depends on the epoch alone, so every worker makes the same one."""

from __future__ import annotations

from typing import Any

from distrain.config.constraints import NonNegativeInt, PositiveInt
from distrain.training.callback import Callback


@Callback.register("should_validate_callback")
class ShouldValidateCallback(Callback):
    """Validation from epoch ``validation_start`` on, every ``validation_interval`` epochs (each: every epoch);
    ``serialization_dir`` is accepted and unused."""

    def __init__(self, serialization_dir: str | None = None, validation_start: NonNegativeInt | None = None,
                 validation_interval: PositiveInt | None = None) -> None:
        self.serialization_dir = serialization_dir
        self.validation_start = validation_start
        self.validation_interval = validation_interval

    def validates(self, epoch: int) -> bool:
        """Whether epoch ``epoch`` (0 the first) is validated."""
        if self.validation_start is not None and epoch < self.validation_start:
            return False
        return self.validation_interval is None or epoch % self.validation_interval == 0

    def on_start(self, trainer: Any) -> None:
        trainer.validate_this_epoch = self.validates(trainer.position.epoch)

    def on_epoch(self, trainer: Any, epoch: int, metrics: dict[str, Any]) -> None:
        trainer.validate_this_epoch = self.validates(epoch + 1)
