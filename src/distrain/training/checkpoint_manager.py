"""The one owner of a run's checkpoints: when to write one, in which format, and how to restore it.

The trainer names its stateful parts (its own progress, the optimizer, the tracker, the schedules,
the callbacks, the sync mode's state) and calls :meth:`CheckpointManager.save` at the end of an
epoch or when :meth:`CheckpointManager.due` says so, handing it the parts each time (the manager keeps
no reference to the trainer: a cycle would keep a finished run's model and process-group objects alive
until the interpreter exits); everything else is decided here:

- **the format** (``trainer.checkpoint_format``): ``full`` gathers the weights and the optimizer state to
  rank 0, which writes ``model.safetensors`` and ``training_state.pt``; ``sharded`` has every worker
  write what it holds into ``sharded/`` with ``torch.distributed.checkpoint``
  (:mod:`distrain.training.sharded_checkpoint`), nothing gathered. Restoring reads whichever format
  the checkpoint has, into whatever layout this run has.
- **the folders** (:class:`~distrain.training.checkpointing.CheckpointFolders`): written under a temporary name
  and renamed, pruned to the ``keep`` newest plus the best.
- **what a resumed run needs** (:mod:`distrain.training.recovery`): the data position, every named part,
  and each worker's own random streams and sums, with checks that the checkpoint fits this run.

Every method is a collective (all workers call it); only rank 0 writes the files it gathers.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Callable, ContextManager, Literal

import torch

from distrain.distributed.collectives import all_gather_object, barrier, broadcast_object
from distrain.distributed.parallel_model import ParallelModel
from distrain.distributed.world import World
from distrain.modules.adapter import base_digest
from distrain.job import history
from distrain.job.disk import writing
from distrain.training.checkpointing import (
    CheckpointError, CheckpointFolders, load_state_file, load_training_state, trained_state,
)
from distrain.training.recovery import EpochProgress, RankParts, fits_problem, order_fingerprint, vocabulary_fingerprint
from distrain.training.sharded_checkpoint import is_sharded, load_sharded, save_sharded

logger = logging.getLogger(__name__)

#: how a checkpoint holds the model and optimizer state (``trainer.checkpoint_format``)
CheckpointFormat = Literal["full", "sharded"]
DEFAULT_FORMAT: CheckpointFormat = "full"
#: the trainer's named stateful parts, and each worker's own state, asked for when they are saved or restored
Parts = Callable[[], dict[str, Any]]
RankPartsOf = Callable[[], RankParts]
#: the version of the training state's layout
FORMAT = 2
#: what a sharded checkpoint's training state holds for the optimizer (its state is in ``sharded/``)
_IN_SHARDED_FOLDER = {"in": "sharded"}


class CheckpointManager:
    """Cadence, format, writing, pruning and restoring of one run's checkpoints."""

    def __init__(
        self,
        directory: Path,
        world: World,
        parallel: ParallelModel,
        model: torch.nn.Module,
        optimizer: torch.optim.Optimizer,
        sampler: Any = None,
        checkpoint_format: CheckpointFormat = "full",
        keep: int = 2,
        every_num_batches: int | None = None,
        every_num_seconds: float | None = None,
        averaged: Callable[[], ContextManager] | None = None,
    ) -> None:
        self.folders = CheckpointFolders(directory, keep)
        #: the model holds the weights the best file keeps while inside (a moving average's), else the trained ones
        self.averaged = averaged
        self.world = world
        self.parallel = parallel
        self.model = model
        self.optimizer = optimizer
        #: the training loader's sampler (its global batch order is fingerprinted)
        self.sampler = sampler
        self.sharded = checkpoint_format == "sharded"
        self.every_num_batches = every_num_batches
        self.every_num_seconds = every_num_seconds
        #: each resume on another world size ({"step", "from", "to"}), kept in every checkpoint after it
        self.world_changes: list[dict[str, int]] = []
        self._saved_at_batches = 0
        self._saved_at_time = time.monotonic()

    @property
    def directory(self) -> Path:
        return self.folders.directory

    def latest(self) -> Path | None:
        return self.folders.latest()

    # ------------------------------------------------------------------------------- cadence
    def start_epoch(self, batches_done: int) -> None:
        """An epoch starts (or resumes) with ``batches_done`` of it behind: the cadence counts from here."""
        self._saved_at_batches, self._saved_at_time = batches_done, time.monotonic()

    def due(self, batches_done: int) -> bool:
        """Whether a mid-epoch checkpoint is due once ``batches_done`` global batches of the epoch are done
        (``save_every_num_batches`` / ``save_every_num_seconds``). Each worker's own view: the workers
        agree on it in the step's agreement."""
        by_batches = (self.every_num_batches is not None
                      and batches_done - self._saved_at_batches >= self.every_num_batches)
        by_time = (self.every_num_seconds is not None
                   and time.monotonic() - self._saved_at_time >= self.every_num_seconds)
        return by_batches or by_time

    # -------------------------------------------------------------------------------- saving
    def save(self, position: EpochProgress, step: int, parts: Parts, rank_parts: RankPartsOf,
             is_best: bool = False) -> Path | None:
        """Write the checkpoint at ``position`` (all workers call this; rank 0 returns its path) of the
        named ``parts`` and each worker's ``rank_parts``; ``is_best`` (an epoch end whose validation
        metric is the best so far) also marks it the best."""
        state = self._training_state(position, step, parts, rank_parts)
        if self.sharded:
            path = self._save_sharded(position, state, is_best)
        else:
            path = self._save_full(position, state, is_best)
        self._saved_at_batches, self._saved_at_time = position.batches, time.monotonic()
        return path

    def _save_full(self, position: EpochProgress, state: dict[str, Any], is_best: bool) -> Path | None:
        if is_best and self.averaged is not None:
            with self.averaged():  # the trained weights again after, for the checkpoint (exact resume)
                best = self.parallel.model_state_dict()
                if self.world.is_primary:
                    self.folders.save_best(trained_state(self.model, best))
        weights = self.parallel.model_state_dict()  # every rank takes part (sharded or split models gather)
        if not self.world.is_primary:
            return None
        weights = trained_state(self.model, weights)
        if is_best and self.averaged is None:
            self.folders.save_best(weights)
        return self.folders.save(position.epoch, position.batches, weights, state, is_best)

    def _save_sharded(self, position: EpochProgress, state: dict[str, Any], is_best: bool) -> Path | None:
        temporary = self.folders.start(position.epoch, position.batches) if self.world.is_primary else None
        temporary = Path(broadcast_object(str(temporary) if temporary else None))
        with writing(self.directory / CheckpointFolders.name(position.epoch, position.batches), names_what_failed=True):
            save_sharded(self.model, self.optimizer, temporary)  # a full disk fails every rank's save alike
        barrier()  # every worker's shard is on disk before rank 0 renames the folder into place
        if not self.world.is_primary:
            return None
        return self.folders.save(position.epoch, position.batches, None, state, is_best, temporary=temporary)

    def _training_state(self, position: EpochProgress, step: int, parts: Parts,
                        rank_parts: RankPartsOf) -> dict[str, Any]:
        """The whole resumable state; rank 0 gathers every worker's own part."""
        return {
            "format": FORMAT,
            "position": {"epoch": position.epoch, "batches": position.batches},
            "step": step,
            "world_size": self.world.size,
            "world_changes": self.world_changes,
            "order": order_fingerprint(self.sampler, position.epoch),
            "sample_order": order_fingerprint(self.sampler, position.epoch, cut=False),
            "vocabulary": vocabulary_fingerprint(self.model),
            "adapter_base": base_digest(self.model),  # the frozen base the checkpoint leaves out
            "parts": {name: part.state_dict() for name, part in self._stored(parts).items()},
            "ranks": all_gather_object(rank_parts().state_dict()),
        }

    def _stored(self, named: Parts) -> dict[str, Any]:
        """The trainer's parts, the optimizer's state taken and given through the parallel model."""
        parts = dict(named())
        if "optimizer" in parts:
            parts["optimizer"] = _OptimizerState(self.parallel, parts["optimizer"], self.sharded)
        return parts

    # ------------------------------------------------------------------------------ restoring
    def restore_latest(self, parts: Parts, rank_parts: RankPartsOf) -> None:
        """Put every part back as the latest checkpoint has it; name the one before it if it does not fit."""
        checkpoints = self.folders.checkpoints()
        if not checkpoints:
            raise CheckpointError(f"{self.folders.directory}: no checkpoint to recover from")
        try:
            self.restore(checkpoints[-1], parts, rank_parts)
        except CheckpointError as error:
            if len(checkpoints) < 2:
                raise
            hint = f"; to resume from the checkpoint before it, delete {checkpoints[-1]}"
            raise CheckpointError(f"{error}{hint}") from None

    def restore(self, checkpoint: Path, parts: Parts, rank_parts: RankPartsOf) -> None:
        """The weights through the parallel model (resharded to this layout), then each part loads its own state
        (``rank_parts`` is asked for after the parts are loaded: the trainer's own part replaces its progress)."""
        state = load_training_state(checkpoint)
        if state.get("format") != FORMAT:
            raise CheckpointError(f"{checkpoint}: checkpoint format {state.get('format')} is not supported")
        position = state["position"]
        problem = fits_problem(state, self.model, self.sampler, position["epoch"])
        if problem is not None:
            raise CheckpointError(f"{checkpoint}: {problem}")
        if is_sharded(checkpoint):  # model and optimizer, resharded to this run's layout
            load_sharded(self.model, self.optimizer, checkpoint)
        else:
            self.parallel.load_model_state_dict(load_state_file(checkpoint / "model.safetensors", self.model))
        try:
            saved_parts = state["parts"]
            for name, part in self._stored(parts).items():
                if name in saved_parts:
                    part.load_state_dict(saved_parts[name])
            rank_parts().load_from_ranks(state["ranks"], self.world.rank, self.world.size)
        except (KeyError, ValueError, RuntimeError) as error:
            raise CheckpointError(f"{checkpoint}: training state does not fit this run ({error})") from None
        logger.info("resumed from %s: epoch %d, %d batch(es) of it done, step %d",
                    checkpoint.name, position["epoch"] + 1, position["batches"], state["step"])
        self.world_changes = list(state.get("world_changes", []))
        before = int(state.get("world_size", self.world.size))
        if before != self.world.size:  # e.g. torchrun --nnodes MIN:MAX restarted us on fewer or more nodes
            self.world_changes.append({"step": state["step"], "from": before, "to": self.world.size})
            logger.warning("world %d -> %d at step %d", before, self.world.size, state["step"])
        if self.world.is_primary:
            history.record(self.directory.parent, "resumed", checkpoint=checkpoint.name, step=state["step"],
                           world_size=self.world.size, **({"world_change": f"{before} -> {self.world.size}"}
                                                          if before != self.world.size else {}))

    def load_best_model(self) -> None:
        """Load the best epoch's weights into the model (after training with validation)."""
        barrier()  # rank 0 may still be writing the last epoch's best weights
        best = self.folders.best()
        if best is not None and is_sharded(best):
            load_sharded(self.model, None, best)
        elif self.folders.best_weights.exists():
            self.parallel.load_model_state_dict(load_state_file(self.folders.best_weights, self.model))


class _OptimizerState:
    """The optimizer as a stateful part, its state taken and given through the parallel model (a sharded
    checkpoint holds it in its ``sharded/`` folder instead, restored with the model)."""

    def __init__(self, parallel: ParallelModel, optimizer: torch.optim.Optimizer, sharded: bool) -> None:
        self.parallel = parallel
        self.optimizer = optimizer
        self.sharded = sharded

    def state_dict(self) -> dict[str, Any]:
        if self.sharded:
            return dict(_IN_SHARDED_FOLDER)
        return self.parallel.optimizer_state_dict(self.optimizer)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state != _IN_SHARDED_FOLDER:
            self.parallel.load_optimizer_state_dict(self.optimizer, state)
