"""Optimizer state in two spellings: by parameter index (``optimizer.state_dict()``) and by parameter
name (``torch.distributed.checkpoint.state_dict``'s full state dict, what sharding strategies save).

A checkpoint written under one strategy is resumed under another, so each strategy accepts both:
the config builds the same parameter groups in the same order, so saved indices and the current
groups' parameters line up position by position.
"""

from __future__ import annotations

from typing import Any

import torch


def _ordered_names(optimizer: torch.optim.Optimizer, model: torch.nn.Module) -> list[list[str]]:
    name_of = {id(param): name for name, param in model.named_parameters()}
    return [[name_of[id(param)] for param in group["params"]] for group in optimizer.param_groups]


def is_named(state: dict[str, Any]) -> bool:
    groups = state.get("param_groups") or []
    return any(isinstance(key, str) for group in groups for key in group.get("params", []))


def to_named(state: dict[str, Any], optimizer: torch.optim.Optimizer, model: torch.nn.Module) -> dict[str, Any]:
    """An index-keyed optimizer state re-keyed by parameter name."""
    names = _ordered_names(optimizer, model)
    rename: dict[Any, str] = {}
    groups = []
    for saved, current in zip(state["param_groups"], names):
        rename.update(zip(saved["params"], current))
        groups.append({**saved, "params": list(current)})
    return {"state": {rename[key]: value for key, value in state["state"].items()}, "param_groups": groups}


def to_indexed(state: dict[str, Any], optimizer: torch.optim.Optimizer, model: torch.nn.Module) -> dict[str, Any]:
    """A name-keyed optimizer state re-keyed by parameter index (the order of the current groups)."""
    names = _ordered_names(optimizer, model)
    index: dict[str, int] = {}
    groups = []
    for saved, current in zip(state["param_groups"], names):
        start = len(index)
        index.update({name: start + position for position, name in enumerate(current)})
        groups.append({**saved, "params": [index[name] for name in current]})
    return {"state": {index[name]: value for name, value in state["state"].items()}, "param_groups": groups}
