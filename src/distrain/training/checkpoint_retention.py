"""AllenNLP's ``trainer.checkpointer`` block, read as distrain's checkpoint settings.

AllenNLP configs say how many checkpoints to keep inside a ``checkpointer`` block
(``keep_most_recent_by_count``, or ``num_serialized_models_to_keep`` before 2.0); distrain's trainer
says it with ``keep_checkpoints`` and ``save_every_num_*``. Both spellings name the same settings;
giving one setting both ways is refused so no value silently wins.
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


def retention_problems(arguments: Mapping[str, Any]) -> list[Problem]:
    """A trainer's ``checkpointer`` (a recipe) against its own checkpoint keys, and its ``moving_average`` against
    its ``checkpoint_format``; paths relative to the trainer."""
    problems = []
    if arguments.get("moving_average") is not None and arguments.get("checkpoint_format") == "sharded":
        problems.append(Problem("moving_average", "needs checkpoint_format full: a sharded checkpoint "
                                                  "marks the trained weights best, not the averaged ones"))
    block = arguments.get("checkpointer")
    if block is None:
        return problems
    given = block.arguments if hasattr(block, "arguments") else block
    for theirs, (own, default) in _SAME_SETTING.items():
        if theirs in given and arguments.get(own) != default:
            problems.append(Problem(f"checkpointer.{theirs}", f"also given as trainer.{own}; keep one"))
    return problems
