"""Less activation memory: recompute chosen modules' activations in backward instead of keeping them
(activation checkpointing), or keep saved activations in host memory (activation offloading, CUDA).

Checkpointing wraps the chosen modules with :func:`~distrain.modules.checkpoint_wrapper.checkpoint_forward`, the
one wrapping (a model's own blocks go through it too).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Iterator

import torch

from distrain.config.errors import ConfigError, Problem
from distrain.modules.checkpoint_wrapper import checkpoint_forward


@dataclass
class ActivationCheckpointing:
    """``modules``: module-name patterns (``encoder.transformer.encoder.layer.*``; see
    :mod:`distrain.modules.selection`) whose activations are recomputed in backward."""

    modules: list[str]


def checkpointed_modules(model: torch.nn.Module, patterns: list[str], path: str) -> list[str]:
    """The names of the modules ``patterns`` select; a pattern matching nothing is a config error."""
    from distrain.modules.selection import select_modules

    selected = select_modules(model, patterns)
    unmatched = [Problem(path, f"pattern {pattern!r} matches no module of the model")
                 for pattern, names in selected.items() if not names]
    if unmatched:
        raise ConfigError(unmatched)
    names = list(dict.fromkeys(name for found in selected.values() for name in found))
    # a module inside another checkpointed module is recomputed with it already
    return [name for name in names if not any(name.startswith(other + ".") for other in names if other != name)]


def apply_activation_checkpointing(model: torch.nn.Module, patterns: list[str],
                                   path: str = "trainer.activation_checkpointing.modules",
                                   offload_to_cpu: bool = False) -> list[str]:
    """Make every module ``patterns`` select recompute its activations in backward; return their names."""
    names = checkpointed_modules(model, patterns, path)
    for name in names:
        checkpoint_forward(model.get_submodule(name), offload_to_cpu)
    return names


def offloading_problems(device: torch.device | str, path: str = "trainer.activation_offloading") -> list[Problem]:
    if torch.device(device).type != "cuda":
        return [Problem(path, "moves saved activations from CUDA memory to the host; this run is on the CPU "
                        "(no cuda_devices >= 0), where activations already live in host memory")]
    return []


@contextlib.contextmanager
def offloaded(enabled: bool) -> Iterator[None]:
    """Inside, tensors saved for backward are kept in pinned host memory (copied back in backward)."""
    if not enabled:
        yield
        return
    with torch.autograd.graph.save_on_cpu(pin_memory=True):
        yield
