"""Config errors as the user sees them: one line per problem, led by the key path.

:class:`Problem` and :class:`ConfigError` are defined in the leaf :mod:`distrain.errors` (the registry
reports unknown names with them, and the config code imports the registry); this module is where config
code and plugins import them from.
"""

from __future__ import annotations

from distrain.errors import ConfigError, Problem

__all__ = ["ConfigError", "Problem", "join_path"]


def join_path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key
