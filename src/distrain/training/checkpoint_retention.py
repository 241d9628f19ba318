"""AllenNLP's ``trainer.checkpointer`` block, read as distrain's checkpoint settings.

AllenNLP configs say how many checkpoints to keep inside a ``checkpointer`` block
(``keep_most_recent_by_count``, or ``num_serialized_models_to_keep`` before 2.0); distrain's trainer
says it with ``keep_checkpoints`` and ``save_every_num_*``. Both spellings name the same settings: the block
is translated into the trainer's keys before the trainer block is validated
(:mod:`distrain.experiment.trainer_keys`), and giving one setting both ways is refused so no value silently wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping

from distrain.config.constraints import NonNegativeFloat, NonNegativeInt, PositiveInt
from distrain.config.errors import Problem


@dataclass
class CheckpointRetention:
    """``keep_most_recent_by_count`` (alias ``num_serialized_models_to_keep``): how many recent
    checkpoints stay (null: all); the best is always kept as well. ``keep_most_recent_by_age`` and
    ``save_completed_epochs: false`` are not supported (every epoch ends with a checkpoint, which
    ``--recover`` relies on)."""

    type: Literal["default"] = "default"
    keep_most_recent_by_count: NonNegativeInt | None = 2
    num_serialized_models_to_keep: NonNegativeInt | None = None
    keep_most_recent_by_age: NonNegativeInt | None = None
    save_completed_epochs: bool = True
    save_every_num_seconds: NonNegativeFloat | None = None
    save_every_num_batches: PositiveInt | None = None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = []
        if arguments["keep_most_recent_by_age"] is not None:
            problems.append(Problem("keep_most_recent_by_age", "is not supported; use keep_most_recent_by_count"))
        if not arguments["save_completed_epochs"]:
            problems.append(Problem("save_completed_epochs", "false is not supported: every epoch ends with a "
                                                             "checkpoint, which --recover resumes from"))
        return problems

    @property
    def keep(self) -> int:
        """Distrain's ``keep_checkpoints`` (0: keep all)."""
        count = (self.num_serialized_models_to_keep if self.num_serialized_models_to_keep is not None
                 else self.keep_most_recent_by_count)
        return 0 if count is None else count


#: the trainer's own key for each checkpointer key, with the trainer key's default
_SAME_SETTING = {
    "keep_most_recent_by_count": ("keep_checkpoints", 2),
    "num_serialized_models_to_keep": ("keep_checkpoints", 2),
    "save_every_num_seconds": ("save_every_num_seconds", None),
    "save_every_num_batches": ("save_every_num_batches", None),
}


def as_trainer_keys(retention: CheckpointRetention, given: Mapping[str, Any],
                    block: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """The trainer's own keys for the settings a ``checkpointer`` block gives (``given`` as written, ``retention``
    built from it), and a problem for each setting the trainer ``block`` gives too (paths relative to the trainer)."""
    problems = [Problem(f"checkpointer.{theirs}", f"also given as trainer.{own}; keep one")
                for theirs, (own, default) in _SAME_SETTING.items() if theirs in given and block.get(own, default) != default]
    keys: dict[str, Any] = {}
    if given.keys() & {"keep_most_recent_by_count", "num_serialized_models_to_keep"}:
        keys["keep_checkpoints"] = retention.keep
    if retention.save_every_num_seconds:
        keys["save_every_num_seconds"] = retention.save_every_num_seconds
    if retention.save_every_num_batches:
        keys["save_every_num_batches"] = retention.save_every_num_batches
    return keys, problems
