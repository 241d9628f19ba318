"""``"checkpoint_format": "sharded"``: the model and optimizer state as a ``torch.distributed.checkpoint``
folder (``sharded/`` inside the checkpoint), each worker writing what it holds, nothing gathered.

Loading reshards: the state is read into whatever this run holds (shards of another mesh, or whole
tensors of a replicated or one-process run), so a sharded checkpoint resumes under any strategy and
world size. The rest of the training state (position, schedules, random streams) is gathered to
rank 0 as in a ``full`` checkpoint. The best epoch is not copied aside: ``best.txt`` names its
checkpoint, which pruning keeps, and the final weights are read from there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from distrain.distributed.collectives import barrier, broadcast_object

if TYPE_CHECKING:
    from distrain.training.trainer import GradientDescentTrainer

SHARDED_DIR = "sharded"


def _no_dist() -> bool:
    import torch.distributed as dist

    return not (dist.is_available() and dist.is_initialized())


def save_sharded(trainer: GradientDescentTrainer, is_best: bool = False) -> Path | None:
    """Write a checkpoint at the trainer's position (all workers call this; rank 0 returns its path)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    state = trainer.training_state()  # the optimizer part is only a marker: it goes in the folder below
    position = trainer.position
    temporary = trainer.checkpointer.start(position.epoch, position.batches) if trainer.world.is_primary else None
    temporary = Path(broadcast_object(str(temporary) if temporary else None))
    model_state, optimizer_state = get_state_dict(trainer.model, trainer.optimizer)
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=temporary / SHARDED_DIR,
             no_dist=_no_dist())
    barrier()  # every worker's shard is on disk before rank 0 renames the folder into place
    if not trainer.world.is_primary:
        return None
    return trainer.checkpointer.save(position.epoch, position.batches, None, state, is_best, temporary=temporary)


def is_sharded(checkpoint: Path) -> bool:
    return (checkpoint / SHARDED_DIR).is_dir()


def load_sharded(trainer: GradientDescentTrainer, checkpoint: Path, optimizer: bool = True) -> None:
    """Read a sharded checkpoint's model (and optimizer) state into what this worker holds."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions, get_model_state_dict, get_state_dict, set_model_state_dict, set_state_dict,
    )

    folder = checkpoint / SHARDED_DIR
    if optimizer:
        model_state, optimizer_state = get_state_dict(trainer.model, trainer.optimizer)
        state: dict[str, Any] = {"model": model_state, "optimizer": optimizer_state}
    else:
        state = {"model": get_model_state_dict(trainer.model)}
    dcp.load(state, checkpoint_id=folder, no_dist=_no_dist())
    if optimizer:
        set_state_dict(trainer.model, trainer.optimizer, model_state_dict=state["model"],
                       optim_state_dict=state["optimizer"], options=StateDictOptions(strict=False))
    else:
        set_model_state_dict(trainer.model, state["model"], options=StateDictOptions(strict=False))


class ShardedOptimizerMarker:
    """What a sharded checkpoint's training state holds for the optimizer (its state is in ``sharded/``)."""

    STATE = {"in": SHARDED_DIR}

    @staticmethod
    def matches(state: Any) -> bool:
        return isinstance(state, dict) and state == ShardedOptimizerMarker.STATE
