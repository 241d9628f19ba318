"""A search space: dotted config keys (or ``extVar:NAME``) mapped to distributions.

Pure functions only (no Optuna import at module level), so they are unit-tested directly.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from distrain.errors import UsageError

EXT_VAR_PREFIX = "extVar:"
KINDS = ("float", "int", "categorical")
#: beyond this many corner points, each key is varied alone (the others at their first value)
MAX_CORNER_POINTS = 256


class SearchSpaceError(UsageError):
    """A search space that is malformed or can produce an invalid config (exit status 2)."""


@dataclass(frozen=True)
class Param:
    key: str
    kind: str
    low: float | int | None = None
    high: float | int | None = None
    step: float | int | None = None
    log: bool = False
    choices: tuple = ()

    @property
    def is_ext_var(self) -> bool:
        return self.key.startswith(EXT_VAR_PREFIX)

    @property
    def ext_var_name(self) -> str:
        return self.key[len(EXT_VAR_PREFIX):]

    def extremes(self) -> list[Any]:
        """The values a trial can reach at the edges: both bounds, or every choice."""
        if self.kind == "categorical":
            return list(self.choices)
        return [self.low, self.highest()] if self.highest() != self.low else [self.low]

    def highest(self) -> Any:
        """The largest value Optuna can suggest (``high`` rounded down onto the step grid)."""
        if self.step is None:
            return self.high
        steps = math.floor((self.high - self.low) / self.step + 1e-9)
        value = self.low + steps * self.step
        return int(value) if self.kind == "int" else value

    def grid(self) -> list[Any]:
        """Every value, for the grid sampler (needs choices or a step)."""
        if self.kind == "categorical":
            return list(self.choices)
        if self.step is None:
            step = 1 if self.kind == "int" else None
            if step is None:
                raise SearchSpaceError(f'search key "{self.key}": the grid sampler needs a "step" for a float range')
        else:
            step = self.step
        count = math.floor((self.high - self.low) / step + 1e-9) + 1
        values = [self.low + i * step for i in range(count)]
        return [int(v) for v in values] if self.kind == "int" else [round(v, 12) for v in values]


def parse_search_space(spec: Any) -> list[Param]:
    """Check the SEARCH object and turn it into :class:`Param` s; every problem names its search key."""
    if not isinstance(spec, dict) or not spec:
        raise SearchSpaceError("the search space must be a non-empty object of dotted keys to distributions")
    return [_parse_param(key, value) for key, value in spec.items()]


def _parse_param(key: str, spec: Any) -> Param:
    where = f'search key "{key}"'
    if key.startswith(EXT_VAR_PREFIX) and not key[len(EXT_VAR_PREFIX):]:
        raise SearchSpaceError(f"{where}: extVar: needs a variable name")
    if not key.startswith(EXT_VAR_PREFIX) and (not key or any(not part for part in key.split("."))):
        raise SearchSpaceError(f"{where}: not a dotted config path")
    if not isinstance(spec, dict):
        raise SearchSpaceError(f'{where}: expected an object like {{"type": "float", "low": 0.001, "high": 0.1}}')
    kind = spec.get("type")
    if kind not in KINDS:
        raise SearchSpaceError(f'{where}: "type" must be one of {", ".join(KINDS)}, got {json.dumps(kind)}')
    allowed = {"type", "choices"} if kind == "categorical" else {"type", "low", "high", "step", "log"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise SearchSpaceError(f"{where}: unknown field {json.dumps(unknown[0])} for a {kind} distribution")
    if kind == "categorical":
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices:
            raise SearchSpaceError(f'{where}: "choices" must be a non-empty list')
        for choice in choices:
            if choice is not None and not isinstance(choice, (bool, int, float, str)):
                raise SearchSpaceError(f"{where}: choice {json.dumps(choice)} is not a number, string, bool or null")
        return Param(key, kind, choices=tuple(choices))
    number = int if kind == "int" else (int, float)
    values = {}
    for field in ("low", "high"):
        value = spec.get(field)
        if isinstance(value, bool) or not isinstance(value, number):
            raise SearchSpaceError(f'{where}: "{field}" must be {"an integer" if kind == "int" else "a number"}, got {json.dumps(value)}')
        values[field] = value
    low, high = values["low"], values["high"]
    if low > high:
        raise SearchSpaceError(f"{where}: low {low} is above high {high}")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise SearchSpaceError(f'{where}: "log" must be true or false')
    step = spec.get("step")
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, number) or step <= 0:
            raise SearchSpaceError(f'{where}: "step" must be a positive {"integer" if kind == "int" else "number"}')
        if log:
            raise SearchSpaceError(f'{where}: "step" and "log" cannot be combined')
    if log and low <= 0:
        raise SearchSpaceError(f"{where}: a log range needs low > 0, got {low}")
    return Param(key, kind, low=low, high=high, step=step, log=log)


def corner_points(params: list[Param]) -> list[dict[str, Any]]:
    """The points at which the space is validated: every combination of the extremes of each key, or,
    beyond :data:`MAX_CORNER_POINTS`, each key's extremes with the other keys at their first value."""
    extremes = [param.extremes() for param in params]
    if math.prod(len(values) for values in extremes) <= MAX_CORNER_POINTS:
        return [dict(zip((p.key for p in params), combination)) for combination in itertools.product(*extremes)]
    base = {param.key: values[0] for param, values in zip(params, extremes)}
    points = [base]
    for param, values in zip(params, extremes):
        points += [{**base, param.key: value} for value in values[1:]]
    return points


def split_point(point: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``(overrides, ext_vars)`` for one point: dotted keys become overrides, ``extVar:NAME`` an ext var.

    Ext vars are strings: a string value as is, anything else as JSON (read it with ``std.parseJson``).
    """
    overrides, ext_vars = {}, {}
    for key, value in point.items():
        if key.startswith(EXT_VAR_PREFIX):
            ext_vars[key[len(EXT_VAR_PREFIX):]] = value if isinstance(value, str) else json.dumps(value)
        else:
            overrides[key] = value
    return overrides, ext_vars


def suggest(trial: Any, params: list[Param]) -> dict[str, Any]:
    """Draw one point from an Optuna trial; parameter names are the search keys."""
    point = {}
    for param in params:
        if param.kind == "categorical":
            point[param.key] = trial.suggest_categorical(param.key, list(param.choices))
        elif param.kind == "int":
            point[param.key] = trial.suggest_int(param.key, param.low, param.high, step=param.step or 1, log=param.log)
        else:
            point[param.key] = trial.suggest_float(param.key, param.low, param.high, step=param.step, log=param.log)
    return point


def grid_space(params: list[Param]) -> dict[str, list[Any]]:
    return {param.key: param.grid() for param in params}
