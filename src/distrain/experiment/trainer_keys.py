"""AllenNLP's trainer keys, translated into distrain's before the trainer block is validated, as
:mod:`.model_keys` does for ``model.initializer``: the trainer's signature holds none of them.

- ``cuda_device`` (a GPU id, ``-1`` the CPU): kept for the run, where it stands for a ``distributed`` block
  of one device (:attr:`~distrain.experiment.plan.ResolvedExperiment.distributed`).
- ``checkpointer``: the same settings as ``keep_checkpoints`` and ``save_every_num_*``
  (:mod:`distrain.training.checkpoint_retention`), written into those keys.
- ``grad_norm: true`` (AllenNLP computes the norm without rescaling; distrain reports none) and ``false``: no
  clipping, as the key left out; a number stays the trainer's.
- ``run_confidence_checks`` (a normalisation after a biased layer): accepted and dropped.
- ``enable_default_callbacks``: ``true`` adds AllenNLP's default callback, ``console_logger``, to ``callbacks``
  (unless they hold one); ``false``, and the key left out, add nothing (distrain logs each epoch's metrics itself).

Each is validated at its own key path (``trainer.cuda_device``, ``trainer.checkpointer.keep_most_recent_by_count``)
with the type it had in the trainer's signature. A trainer whose constructor takes one of these keys itself
keeps it.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Ge

from distrain.config.constraints import PositiveFloat
from distrain.config.errors import Problem
from distrain.config.schema import resolve
from distrain.experiment.foreign_keys import keys_its_class_lacks
from distrain.training.checkpoint_retention import CheckpointRetention, as_trainer_keys
from distrain.training.trainer import Trainer

#: each AllenNLP key and the values it takes
ALLENNLP_TRAINER_KEYS: dict[str, Any] = {
    "cuda_device": Annotated[int, Ge(-1)] | None,
    "checkpointer": CheckpointRetention | None,
    "grad_norm": PositiveFloat | bool | None,
    "run_confidence_checks": bool,
    "enable_default_callbacks": bool,
}
#: the keys kept for the run rather than written into the trainer's own
KEPT = ("cuda_device",)


def translate_trainer_keys(config: dict[str, Any], problems: list[Problem]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``config`` with its trainer block in distrain's keys, and the values of :data:`KEPT` it gave; a bad value
    is a problem at its key path (appended to ``problems``) and leaves the block."""
    block = config.get("trainer")
    taken = keys_its_class_lacks(block, Trainer, ALLENNLP_TRAINER_KEYS)
    if isinstance(block, dict) and "grad_norm" in block and not _a_number(block["grad_norm"]):
        taken["grad_norm"] = block["grad_norm"]  # true, false or a wrong value; a number is the trainer's
    if not taken:
        return config, {}
    translated = {key: value for key, value in block.items() if key not in taken}
    kept = {}
    for key, value in taken.items():
        found: list[Problem] = []
        node = resolve(ALLENNLP_TRAINER_KEYS[key], value, f"trainer.{key}", found)
        problems += found
        if found:
            continue
        if key in KEPT:
            kept[key] = node.build()
        elif key == "checkpointer" and value is not None:
            keys, conflicts = as_trainer_keys(node.build(), value if isinstance(value, dict) else {}, block)
            problems += [Problem(f"trainer.{problem.path}", problem.message) for problem in conflicts]
            translated.update(keys)
        elif key == "enable_default_callbacks" and node.build():
            translated["callbacks"] = with_console_logger(translated.get("callbacks"))
    return {**config, "trainer": translated}, kept


def with_console_logger(callbacks: Any) -> Any:
    """``callbacks`` (a trainer's, as configured) with AllenNLP's ``console_logger`` unless they hold one; a value
    that is not a list is left for the trainer's validation to report."""
    if callbacks is None:
        callbacks = []
    if not isinstance(callbacks, list):
        return callbacks
    named = [item if isinstance(item, str) else item.get("type") if isinstance(item, dict) else None
             for item in callbacks]
    return callbacks if "console_logger" in named else [*callbacks, {"type": "console_logger"}]


def _a_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
