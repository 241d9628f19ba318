"""Turn a jsonnet file, external variables and command-line overrides into one plain dict."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from distrain.config.errors import ConfigError

_JSONNET_LOCATION = re.compile(r"(STATIC|RUNTIME) ERROR: (.*)")


def evaluate_jsonnet(path: str | Path, ext_vars: dict[str, str] | None = None) -> dict[str, Any]:
    """Evaluate a jsonnet (or JSON) file; ``std.extVar`` sees the environment plus ``ext_vars``."""
    import _jsonnet

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    variables = {key: value for key, value in os.environ.items() if _is_identifier(key)}
    variables.update(ext_vars or {})
    try:
        text = _jsonnet.evaluate_file(str(path), ext_vars=variables)
    except RuntimeError as error:
        raise ConfigError(_render_jsonnet_error(str(error))) from None
    config = json.loads(text)
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: the config must evaluate to an object, got {type(config).__name__}")
    return config


def _is_identifier(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


def _render_jsonnet_error(message: str) -> str:
    """jsonnet says ``STATIC ERROR: f.jsonnet:2:5: unexpected ...``; keep it to one line with file:line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    first = lines[0] if lines else message
    match = _JSONNET_LOCATION.match(first)
    if match and match.group(1) == "STATIC":
        return f"jsonnet syntax error at {match.group(2)}"
    detail = match.group(2) if match else first
    location = next((line.split("\t")[0] for line in lines[1:] if ":" in line), "")
    return f"jsonnet error at {location}: {detail}" if location else f"jsonnet error: {detail}"


def parse_ext_vars(pairs: list[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` from ``--ext-var`` flags as a dict."""
    from distrain.errors import UsageError

    ext_vars = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--ext-var {pair!r}: expected KEY=VALUE")
        ext_vars[key] = value
    return ext_vars


def parse_overrides(text: str | None) -> dict[str, Any]:
    return json_object_argument(text, "--overrides")


def json_object_argument(text: str | None, flag: str) -> dict[str, Any]:
    """A flag's JSON object (``{}`` when not given); a :class:`ConfigError` naming the flag otherwise."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"{flag}: not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{flag}: expected a JSON object")
    return value


def apply_overrides(config: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Merge ``overrides`` (keys may be dotted paths) into a copy of ``config``.

    Objects merge key by key; any other value replaces. ``null`` removes the key, so the
    component's default applies.
    """
    merged = json.loads(json.dumps(config))
    for dotted, value in overrides.items():
        _merge(merged, dotted.split("."), value)
    return merged


def _merge(target: dict[str, Any], keys: list[str], value: Any) -> None:
    head, rest = keys[0], keys[1:]
    if rest:
        child = target.get(head)
        if not isinstance(child, dict):
            child = {}
            target[head] = child
        _merge(child, rest, value)
    elif value is None:
        target.pop(head, None)
    elif isinstance(value, dict) and isinstance(target.get(head), dict):
        for key, sub in value.items():
            _merge(target[head], key.split("."), sub)
    else:
        target[head] = value


def load_config(
    path: str | Path, overrides: str | dict | None = None, ext_vars: dict[str, str] | None = None
) -> dict[str, Any]:
    config = evaluate_jsonnet(path, ext_vars)
    if isinstance(overrides, str):
        overrides = parse_overrides(overrides)
    return apply_overrides(config, overrides or {})
