"""Pick submodules of a model by name pattern (shard units, activation checkpointing).

A pattern is a dotted module name whose parts may be globs: ``*`` matches one name part
(``encoder.layer.*`` is every layer, not their children), ``**`` any number of parts, including none
(``**.attention``). Patterns are matched against ``named_modules()`` names; the root is never matched.
"""

from __future__ import annotations

import fnmatch
from typing import Iterable

import torch


def matches(pattern: str, name: str) -> bool:
    """Whether the dotted module ``name`` matches ``pattern``."""
    return _match(pattern.split("."), name.split(".") if name else [])


def _match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(rest, parts[start:]) for start in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _match(rest, parts[1:])


def select_modules(model: torch.nn.Module, patterns: Iterable[str]) -> dict[str, list[str]]:
    """For each pattern, the names of the modules it matches (in ``named_modules`` order)."""
    names = [name for name, _ in model.named_modules() if name]
    return {pattern: [name for name in names if matches(pattern, name)] for pattern in patterns}


def deepest_first(names: Iterable[str]) -> list[str]:
    """Module names ordered so a module comes before every module that contains it (bottom-up)."""
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda name: -name.count("."))
