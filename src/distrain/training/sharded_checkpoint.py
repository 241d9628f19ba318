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
from typing import Any

import torch

SHARDED_DIR = "sharded"


def _no_dist() -> bool:
    import torch.distributed as dist

    return not (dist.is_available() and dist.is_initialized())


def save_sharded(model: torch.nn.Module, optimizer: torch.optim.Optimizer, checkpoint: Path) -> None:
    """Every worker writes the model and optimizer state it holds into ``checkpoint``'s sharded folder."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    from distrain.training.checkpointing import trained_state

    model_state, optimizer_state = get_state_dict(model, optimizer)
    model_state = trained_state(model, model_state)  # an adapter's frozen base is read from its folder again
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=Path(checkpoint) / SHARDED_DIR,
             no_dist=_no_dist())


def is_sharded(checkpoint: Path) -> bool:
    return (checkpoint / SHARDED_DIR).is_dir()


def load_sharded(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None, checkpoint: Path) -> None:
    """Read a sharded checkpoint's model (and, given one, optimizer) state into what this worker holds."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import (
        StateDictOptions, get_model_state_dict, get_state_dict, set_model_state_dict, set_state_dict,
    )

    folder = checkpoint / SHARDED_DIR
    if optimizer is not None:
        model_state, optimizer_state = get_state_dict(model, optimizer)
        state: dict[str, Any] = {"model": model_state, "optimizer": optimizer_state}
    else:
        state = {"model": get_model_state_dict(model)}
    from distrain.training.checkpointing import trained_state

    state["model"] = trained_state(model, state["model"])  # what the checkpoint holds: not an adapter's base
    dcp.load(state, checkpoint_id=folder, no_dist=_no_dist())
    if optimizer is not None:
        set_state_dict(model, optimizer, model_state_dict=state["model"],
                       optim_state_dict=state["optimizer"], options=StateDictOptions(strict=False))
    else:
        set_model_state_dict(model, state["model"], options=StateDictOptions(strict=False))
