"""Adapters: a few trainable parameters injected into a frozen ``transformers`` model (``model.adapter``).

A model that holds a transformers model takes ``adapter: Adapter | None`` and calls :func:`adapt` once
its transformer and head are built: the adapter is injected into the transformer (implementations in
:mod:`distrain.modules.adapters`, e.g. ``lora`` through ``peft``), every other parameter of the
transformer is frozen, and what the model adds (its task head) stays trainable. The optimizer and the
strategies see ``requires_grad`` only, so they hold state for what trains and nothing else.

Applied in the model's constructor rather than as a transform at assembly (where DESIGN.md suggests it): every
path that builds a model (training, the meta-device checks before data is read, FSDP's delayed initialisation,
archive loading, ``distrain check``) goes through the constructor, so each sees the adapted model with no step of
its own, and ``model.adapter`` is where the config puts it.

Checkpoints and archives keep only what trains when the frozen base can be found again: a pretrained
folder, named in the archive with the content hash of its weights files (:func:`weights_digest`), which
loading checks. A base built from a config (random init) cannot be found again: its weights are kept.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import torch

from distrain.config.errors import ConfigError, Problem
from distrain.registry import Registrable


class AdapterError(ConfigError):
    """A configured adapter that does not fit its model (found when the model is built: also on the meta
    device before any data is read, see :mod:`distrain.experiment.checks`)."""


class Adapter(Registrable):
    """Injects its parameters into a transformers model in place and freezes the rest of it."""

    def apply(self, transformer: torch.nn.Module, path: str) -> None:
        """Inject into ``transformer``; problems are :class:`AdapterError` at config key ``path``."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The settings an exported adapter folder records (see ``distrain export``)."""
        raise NotImplementedError


def linear_names(transformer: torch.nn.Module) -> list[str]:
    """The names of the transformer's linear layers (``transformers``' GPT-2 ``Conv1D`` counts as one)."""
    return [name for name, module in transformer.named_modules()
            if isinstance(module, torch.nn.Linear) or type(module).__name__ == "Conv1D"]


def default_targets(transformer: torch.nn.Module) -> list[str]:
    """The last names of the linear layers inside the repeated blocks (the members of any ``ModuleList``):
    the attention and feed-forward projections of any architecture, named by the architecture itself."""
    blocks = [f"{name}.{index}" for name, module in transformer.named_modules()
              if isinstance(module, torch.nn.ModuleList) for index in range(len(module))]
    inside = [name for name in linear_names(transformer) if any(name.startswith(block + ".") for block in blocks)]
    return sorted({name.rpartition(".")[2] for name in inside})


def matches(name: str, target: str) -> bool:
    """``peft``'s rule: a target names a module by its full name or by its last dotted parts."""
    return name == target or name.endswith("." + target)


def target_problems(transformer: torch.nn.Module, targets: list[str], path: str) -> list[Problem]:
    """A problem at ``path`` for each target that names none of the transformer's linear layers."""
    names = linear_names(transformer)
    unmatched = [target for target in targets if not any(matches(name, target) for name in names)]
    if not unmatched:
        return []
    existing = sorted({name.rpartition(".")[2] for name in names})
    return [Problem(path, f"{', '.join(repr(t) for t in unmatched)} matches no linear layer of the model; "
                          f"its linear layers are named {', '.join(existing)}")]


def adapt(model: torch.nn.Module, transformer: torch.nn.Module, adapter: Adapter, base_name: str | None) -> None:
    """Inject ``adapter`` into ``transformer`` (held by ``model``), freeze the transformer's own parameters,
    and record what checkpoints may leave out: the frozen state, when ``base_name`` (a pretrained folder)
    can give it back; a config-built base (``base_name`` None) is kept whole."""
    adapter.apply(transformer, "model.adapter")
    prefix = next(name for name, module in model.named_modules() if module is transformer)
    adapted = {id(parameter) for name, parameter in transformer.named_parameters() if _is_adapter(name)}
    for parameter in transformer.parameters():
        parameter.requires_grad_(id(parameter) in adapted)
    trainable = {name for name, parameter in model.named_parameters() if parameter.requires_grad}
    model.adapter = adapter
    model.adapter_base = base_name if base_name is not None and weights_files(base_name) else None
    if model.adapter_base is not None:
        model.frozen_state_names = frozenset(name for name in model.state_dict()
                                             if name.startswith(prefix + ".") and name not in trainable)


def _is_adapter(name: str) -> bool:
    return any(part.startswith("lora_") for part in name.split("."))


def weights_files(name: str) -> list[Path]:
    """The weights files of the pretrained folder ``name`` (safetensors, else torch files); [] for none."""
    from distrain.pretrained import PretrainedNotFound, locate

    try:
        folder = Path(locate(name))
    except PretrainedNotFound:
        return []
    if not folder.is_dir():
        return []
    found = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin"))
    return [path for path in found if path.is_file()]


def base_digest(model: torch.nn.Module) -> str | None:
    """The :func:`weights_digest` of the base an adapted model's checkpoints leave out; None when they keep it."""
    if not getattr(model, "frozen_state_names", None) or getattr(model, "adapter_base", None) is None:
        return None
    return weights_digest(model.adapter_base)


def weights_digest(name: str) -> str:
    """sha256 over the names and contents of ``name``'s weights files: what an adapter was trained on (read
    once per process while the files keep their sizes and modification times)."""
    files = weights_files(name)
    return _digest(tuple((str(path), path.stat().st_size, path.stat().st_mtime_ns) for path in files))


@functools.lru_cache(maxsize=8)
def _digest(files: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for path, _, _ in files:
        path = Path(path)
        digest.update(path.name.encode() + b"\0")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def merged_state(transformer: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The transformer's state under its own names (as before the adapter), each adapted layer's update merged
    into its weight: what a plain transformers model of the same architecture loads."""
    merged: dict[str, torch.Tensor] = {}
    layers = {name: module for name, module in transformer.named_modules() if hasattr(module, "get_delta_weight")}
    for name, tensor in transformer.state_dict().items():
        if _is_adapter(name):
            continue
        merged[name.replace(".base_layer.", ".")] = tensor.detach().clone()
    with torch.no_grad():
        for name, layer in layers.items():
            for adapter_name in layer.active_adapters:
                merged[f"{name}.weight"] += layer.get_delta_weight(adapter_name).to(merged[f"{name}.weight"].dtype)
    return merged
