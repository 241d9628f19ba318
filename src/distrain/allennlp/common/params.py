"""``allennlp.common.params``: ``Params``, a config block that components pop their arguments from.

AllenNLP's ``from_params`` code and users' scripts read configs through it; distrain builds components from
plain dicts itself, so ``Params`` is what users' own code holds: jsonnet evaluated by distrain's loader (the
environment visible to ``std.extVar``, as in AllenNLP), overrides merged as ``-o`` merges them, and every key
popped or missing reported with where it was (``key "x" is required at location "model."``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from distrain.config.errors import ConfigError as ConfigurationError

__all__ = ["Params", "parse_overrides", "with_overrides"]


class _Missing:
    def __repr__(self) -> str:
        return "DEFAULT"


class Params(MutableMapping):
    """A dict of config values with ``history``, the key path it sits at; dicts read from it are ``Params``."""

    DEFAULT = _Missing()

    def __init__(self, params: dict[str, Any], history: str = "") -> None:
        self.params = _none_for_strings(params)
        self.history = history

    # ------------------------------------------------------------------- popping arguments
    def pop(self, key: str, default: Any = DEFAULT, keep_as_dict: bool = False) -> Any:
        """``params.pop(key)``; a missing key without ``default`` is a :class:`ConfigurationError` naming where."""
        if key in self.params:
            value = self.params.pop(key)
        elif default is self.DEFAULT:
            where = f' at location "{self.history}"' if self.history else ""
            raise ConfigurationError(f'key "{key}" is required{where}')
        else:
            value = default
        return value if keep_as_dict else self._wrapped(key, value)

    def pop_int(self, key: str, default: Any = DEFAULT) -> int | None:
        value = self.pop(key, default)
        return None if value is None else int(value)

    def pop_float(self, key: str, default: Any = DEFAULT) -> float | None:
        value = self.pop(key, default)
        return None if value is None else float(value)

    def pop_bool(self, key: str, default: Any = DEFAULT) -> bool | None:
        """A bool, or the strings ``"true"`` and ``"false"`` (as ``--overrides`` may give them)."""
        value = self.pop(key, default)
        if value is None or isinstance(value, bool):
            return value
        if value in ("true", "false"):
            return value == "true"
        raise ValueError(f"Cannot convert variable to bool: {value}")

    def pop_choice(self, key: str, choices: list[Any], default_to_first_choice: bool = False,
                   allow_class_names: bool = True) -> Any:
        """The value of ``key``, which must be one of ``choices`` (or, with ``allow_class_names``, a dotted
        class name); missing, the first choice where ``default_to_first_choice``."""
        value = self.pop(key, choices[0] if default_to_first_choice else self.DEFAULT)
        if value in choices or (allow_class_names and isinstance(value, str) and "." in value):
            return value
        raise ConfigurationError(f"{value} not in acceptable choices for {self.history}{key}: {choices}; import the "
                                 "module that registers it (--include-package) or give a dotted class name")

    def get(self, key: str, default: Any = DEFAULT) -> Any:
        return self._wrapped(key, self.params.get(key, None if default is self.DEFAULT else default))

    def assert_empty(self, class_name: str) -> None:
        """A :class:`ConfigurationError` naming the keys left over after ``class_name`` popped its own."""
        if self.params:
            raise ConfigurationError(f"Extra parameters passed to {class_name}: {self.params}")

    # ------------------------------------------------------------------- as plain values
    def as_dict(self, quiet: bool = False, infer_type_and_cast: bool = False) -> dict[str, Any]:
        """The values as a plain dict; ``infer_type_and_cast`` turns strings that read as numbers or booleans
        into them (as values from the environment arrive)."""
        return _cast(self.params) if infer_type_and_cast else self.params

    def as_flat_dict(self) -> dict[str, Any]:
        """Nested keys joined with dots: ``{"model.encoder.type": "lstm", ...}``."""
        flat: dict[str, Any] = {}

        def walk(block: dict[str, Any], prefix: str) -> None:
            for key, value in block.items():
                if isinstance(value, dict):
                    walk(value, f"{prefix}{key}.")
                else:
                    flat[f"{prefix}{key}"] = value

        walk(self.params, "")
        return flat

    def as_ordered_dict(self, preference_orders: list[list[str]] | None = None) -> dict[str, Any]:
        return dict(sorted(self.params.items()))

    def duplicate(self) -> Params:
        """A deep copy: popping from it leaves this one as it is."""
        return copy.deepcopy(self)

    def to_file(self, params_file: str, preference_orders: list[list[str]] | None = None) -> None:
        Path(params_file).write_text(json.dumps(self.params, indent=4), encoding="utf-8")

    def __str__(self) -> str:
        return f"{self.history}Params({self.params})"

    # ------------------------------------------------------------------- from a file
    @classmethod
    def from_file(cls, params_file: str | Path, params_overrides: str | dict[str, Any] = "",
                  ext_vars: dict[str, str] | None = None) -> Params:
        """The jsonnet (or JSON) file, ``params_overrides`` (a JSON string or dict, dotted keys allowed) merged in."""
        from distrain.config.loading import load_config

        return cls(load_config(params_file, parse_overrides(params_overrides), ext_vars))

    # ------------------------------------------------------------------- a mapping
    def __getitem__(self, key: str) -> Any:
        if key not in self.params:
            raise KeyError(str(key))
        return self._wrapped(key, self.params[key])

    def __setitem__(self, key: str, value: Any) -> None:
        self.params[key] = value

    def __delitem__(self, key: str) -> None:
        del self.params[key]

    def __iter__(self):
        return iter(self.params)

    def __len__(self) -> int:
        return len(self.params)

    def _wrapped(self, key: str, value: Any) -> Any:
        """A dict as ``Params`` under this one's history (in lists too); anything else as it is."""
        if isinstance(value, dict):
            return Params(value, history=f"{self.history}{key}.")
        if isinstance(value, list):
            return [self._wrapped(f"{key}.{index}", item) for index, item in enumerate(value)]
        return value


def parse_overrides(params_overrides: str | dict[str, Any] | None) -> dict[str, Any]:
    """Overrides as a dict: a JSON (or jsonnet) string, or a dict as it is."""
    if not params_overrides:
        return {}
    if isinstance(params_overrides, dict):
        return params_overrides
    import _jsonnet

    try:
        return json.loads(_jsonnet.evaluate_snippet("overrides", params_overrides))
    except RuntimeError as error:
        raise ConfigurationError(f"overrides: not valid JSON or jsonnet ({str(error).splitlines()[0]})") from None


def with_overrides(original: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``original`` with ``overrides`` merged in (dotted keys reach into nested blocks)."""
    from distrain.config.loading import apply_overrides

    return apply_overrides(original, overrides)


def _none_for_strings(value: Any) -> Any:
    """The string ``"None"`` as None, at any depth (AllenNLP's configs and sanitized outputs wrote it so)."""
    if value == "None":
        return None
    if isinstance(value, dict):
        return {key: _none_for_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_none_for_strings(item) for item in value]
    return value


def _cast(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _cast(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cast(item) for item in value]
    if isinstance(value, str):
        if value in ("true", "false"):
            return value == "true"
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                pass
    return value
