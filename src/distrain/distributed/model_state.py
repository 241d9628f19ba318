"""The whole model's and optimizer's state, taken and given on every rank under any layout.

A :class:`Holding` is how the ranks hold the model, and so how its state is taken and given: :data:`WHOLE`
(a replica: its own state dicts), :data:`GATHERED` (shards or tensor-parallel parts, DTensors: torch's full
state dicts, gathered to rank 0's host) and :data:`STAGES` (pipeline stages: each stage's entries
gathered). A strategy names its holding in what it hands back (:class:`~distrain.distributed.applied.Applied`);
one that holds state another way brings its own subclass. Taking the state is a collective for the last
two, so every rank calls it; rank 0 gets the state, the others an empty dict. Optimizer states are keyed
by parameter name or index, so a checkpoint of one layout loads under another.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.distributed.collectives import all_gather_object
from distrain.distributed.optimizer_state import is_named, to_indexed, to_named
from distrain.distributed.parallel_dims import ParallelDims
from distrain.distributed.world import World

def _full(**extra):
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    return StateDictOptions(full_state_dict=True, cpu_offload=True, **extra)


def _from_stages(local: dict[str, Any], world: World, dims: ParallelDims) -> dict[str, Any]:
    """Every stage's part (from the first data-parallel and tensor rank of each), merged on rank 0."""
    where = dims.coordinates(world.rank)
    mine = local if where["dp_replicate"] == where["dp_shard"] == where["tp"] == 0 else {}
    merged: dict[str, Any] = {}
    for part in all_gather_object(mine):
        merged.update(part)
    return merged if world.is_primary else {}


def _held(model: torch.nn.Module) -> set[str]:
    return {name for name, p in model.named_parameters() if not p.is_meta}


class Holding:
    """Every rank holds the whole model (a replica, or one process): its own state dicts are the state."""

    def model_state_dict(self, model: torch.nn.Module, world: World, dims: ParallelDims) -> dict[str, Any]:
        return model.state_dict()

    def load_model_state_dict(self, model: torch.nn.Module, state: dict[str, Any]) -> None:
        """Load a whole model's state on every rank; each keeps what it holds (aliases may be missing)."""
        model.load_state_dict(state, strict=False)

    def optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, world: World,
                             dims: ParallelDims) -> dict[str, Any]:
        return optimizer.state_dict()

    def load_optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                                  state: dict[str, Any]) -> None:
        """Load an optimizer state saved under any layout (keyed by parameter index or name)."""
        optimizer.load_state_dict(to_indexed(state, optimizer, model) if is_named(state) else state)


class Gathered(Holding):
    """Ranks hold shards or tensor-parallel parts (DTensors): torch's full state dicts, gathered to rank 0."""

    def model_state_dict(self, model: torch.nn.Module, world: World, dims: ParallelDims) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        aliases = _tied_aliases(model)
        return {name: value for name, value in get_model_state_dict(model, options=_full()).items()
                if name not in aliases}

    def load_model_state_dict(self, model: torch.nn.Module, state: dict[str, Any]) -> None:
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        set_model_state_dict(model, state, options=_full(strict=False))

    def optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, world: World,
                             dims: ParallelDims) -> dict[str, Any]:
        from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

        return get_optimizer_state_dict(model, optimizer, options=_full())

    def load_optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                                  state: dict[str, Any]) -> None:
        from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

        if not is_named(state):  # saved by a replicating strategy
            state = to_named(state, optimizer, model)
        set_optimizer_state_dict(model, optimizer, state, options=_full())


class Stages(Holding):
    """Each rank holds one pipeline stage: each stage's entries, by name, merged on rank 0."""

    def model_state_dict(self, model: torch.nn.Module, world: World, dims: ParallelDims) -> dict[str, Any]:
        return _from_stages({k: v.detach().cpu() for k, v in model.state_dict().items() if not v.is_meta}, world, dims)

    def load_model_state_dict(self, model: torch.nn.Module, state: dict[str, Any]) -> None:
        held = {k for k, v in model.state_dict().items() if not v.is_meta}
        model.load_state_dict({k: v for k, v in state.items() if k in held}, strict=False)

    def optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, world: World,
                             dims: ParallelDims) -> dict[str, Any]:
        named = to_named(optimizer.state_dict(), optimizer, model)
        held = _held(model)
        states = _from_stages({name: value for name, value in named["state"].items() if name in held}, world, dims)
        return {"state": states, "param_groups": named["param_groups"]} if world.is_primary else {}

    def load_optimizer_state_dict(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                                  state: dict[str, Any]) -> None:
        if not is_named(state):  # saved by a replicating strategy
            state = to_named(state, optimizer, model)
        held = _held(model)
        state = {**state, "state": {k: v for k, v in state["state"].items() if k in held}}
        optimizer.load_state_dict(to_indexed(state, optimizer, model))


#: the three built-in holdings
WHOLE, GATHERED, STAGES = Holding(), Gathered(), Stages()


def _tied_aliases(model: torch.nn.Module) -> set[str]:
    """The later names of tied parameters (an output layer sharing the input embeddings): gathered, each name gets
    a copy of its own, where one process's state dict shares one tensor that its weights file writes once."""
    first: dict[int, str] = {}
    aliases = set()
    for name, parameter in model.named_parameters(remove_duplicate=False):
        if first.setdefault(id(parameter), name) != name:
            aliases.add(name)
    return aliases
