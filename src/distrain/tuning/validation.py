"""Check that every corner of a search space gives a valid config, before any trial trains.

The check is the one ``distrain train`` does (:func:`distrain.config.loading.load_config` for
overrides and ext vars, :func:`distrain.experiment.plan.resolve_experiment` for the schema); this module
only says which search key and value made a problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from distrain.config.errors import ConfigError
from distrain.tuning.space import Param, SearchSpaceError, corner_points, split_point


def point_config(
    config_path: str | Path, point: dict[str, Any], overrides: dict[str, Any] | None = None,
    ext_vars: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The evaluated config at one point of the space (the base overrides first, the point's on top)."""
    from distrain.config.loading import load_config

    point_overrides, point_ext_vars = split_point(point)
    return load_config(config_path, {**(overrides or {}), **point_overrides}, {**(ext_vars or {}), **point_ext_vars})


def validate_space(
    config_path: str | Path, params: list[Param], overrides: dict[str, Any] | None = None,
    ext_vars: dict[str, str] | None = None,
) -> int:
    """Raise :class:`SearchSpaceError` naming the search key(s) and value(s) of the first corner point that
    gives an invalid config; return how many points were checked."""
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_builtins

    import_builtins()  # the registry is the schema; plugins (--include-package) are the caller's to import
    points = corner_points(params)
    for point in points:
        try:
            resolve_experiment(point_config(config_path, point, overrides, ext_vars))
        except ConfigError as error:
            raise SearchSpaceError(describe_problem(error, point, params)) from None
    return len(points)


def describe_problem(error: ConfigError, point: dict[str, Any], params: list[Param]) -> str:
    """One line: the search key(s) and value(s) to blame, then the config problems they cause."""
    problems = "; ".join(str(problem) for problem in error.problems)
    blamed = [p for p in params if not p.is_ext_var and any(_related(p.key, pr.path) for pr in error.problems)]
    if not blamed:
        # a jsonnet error or a key the ext var feeds: no key path leads back, so name the ext vars
        blamed = [p for p in params if p.is_ext_var]
    if not blamed:
        values = ", ".join(f"{key} = {json.dumps(value)}" for key, value in point.items())
        return f"the config is invalid at search point ({values}): {problems}"
    names = ", ".join(f'search key "{p.key}" = {json.dumps(point[p.key])}' for p in blamed)
    return f"{names} gives an invalid config: {problems}"


def _related(search_key: str, problem_path: str) -> bool:
    """Whether a problem at ``problem_path`` lies under, at or above the overridden ``search_key``."""
    if not problem_path:
        return False
    for inner, outer in ((problem_path, search_key), (search_key, problem_path)):
        if inner == outer or inner.startswith(outer + ".") or inner.startswith(outer + "["):
            return True
    return False
