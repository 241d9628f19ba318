"""``distrain list [BASE]``: every registered component, with its config arguments."""

from __future__ import annotations

import argparse
import collections.abc
import dataclasses
import inspect
import re
import types
import typing

from distrain.commands.arguments import add_plugin_arguments
from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", nargs="?", help="only this base class, e.g. Model or DatasetReader")
    add_plugin_arguments(parser)


def describe_annotation(annotation) -> str:
    """The type a config value takes, constraints left out: ``Optional[Lazy[pkg.Optimizer]]`` → ``Lazy[Optimizer] | None``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return describe_annotation(args[0])
    if origin in (typing.Union, types.UnionType):
        parts = [describe_annotation(arg) for arg in args if arg is not type(None)]
        return " | ".join(parts + (["None"] if type(None) in args else []))
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(arg) for arg in args) + "]"
    if origin is not None and args:
        name = getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        return f"{name}[{', '.join(describe_annotation(arg) for arg in args)}]"
    text = getattr(annotation, "__name__", None) if inspect.isclass(annotation) else None
    text = text or str(annotation).replace("typing.", "")
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", text).replace("NoneType", "None")


def describe_constraints(annotation) -> str:
    """What the annotation demands of a value beyond its type, e.g. ``must be >= 1``, ``each must be in [0, 1)``."""
    phrases = list(dict.fromkeys(_constraints(annotation, each=False)))
    return "; ".join(phrases)


def _constraints(annotation, each: bool) -> list[str]:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    lead = "each must" if each else "must"
    if origin is typing.Annotated:
        found = [f"{lead} {phrase}" for phrase in _rules(annotation.__metadata__, args[0])]
        return found + _constraints(args[0], each)
    if origin in (typing.Union, types.UnionType):
        return [phrase for arg in args for phrase in _constraints(arg, each)]
    if origin in (list, tuple, set, collections.abc.Sequence, collections.abc.Iterable):
        return [phrase for arg in args if arg is not Ellipsis for phrase in _constraints(arg, True)]
    if origin in (dict, collections.abc.Mapping) and len(args) == 2:
        return _constraints(args[1], True)
    return []


def _rules(metadata, base) -> list[str]:
    """One phrase per rule: a range (``>= 1``, ``in (0, 1]``), a length, or a ``Must``'s description."""
    lower = next(((f"{op}", getattr(item, name)) for item in metadata
                  for name, op in (("ge", "["), ("gt", "(")) if getattr(item, name, None) is not None), None)
    upper = next(((f"{op}", getattr(item, name)) for item in metadata
                  for name, op in (("le", "]"), ("lt", ")")) if getattr(item, name, None) is not None), None)
    rules = []
    if lower and upper:
        rules.append(f"be in {lower[0]}{lower[1]}, {upper[1]}{upper[0]}")
    elif lower:
        rules.append(f"be {'>=' if lower[0] == '[' else '>'} {lower[1]}")
    elif upper:
        rules.append(f"be {'<=' if upper[0] == ']' else '<'} {upper[1]}")
    for item in metadata:
        if getattr(item, "min_length", None):
            noun = "character" if base is str else "item"
            rules.append(f"have at least {item.min_length} {noun}" + ("s" if item.min_length != 1 else ""))
        if getattr(item, "max_length", None) is not None:
            rules.append(f"have at most {item.max_length} {'characters' if base is str else 'items'}")
        if isinstance(getattr(item, "description", None), str) and callable(getattr(item, "test", None)):
            rules.append(item.description)
    return rules


def summary(cls: type) -> str:
    """The first line of the class's own docstring (not one inherited from a base class)."""
    doc = cls.__dict__.get("__doc__") or ""
    return inspect.cleandoc(doc).split("\n")[0] if doc else ""


@dataclasses.dataclass(frozen=True)
class Argument:
    """One configurable constructor argument, as ``distrain list`` and the docs' reference show it."""

    name: str
    type: str
    default: str  # "required" or "default <repr>"
    constraints: str  # "" when the type is all there is

    def line(self) -> str:
        return f"{self.name}: {self.type} ({self.default})" + (f", {self.constraints}" if self.constraints else "")


@dataclasses.dataclass(frozen=True)
class Component:
    name: str
    cls: type
    summary: str
    arguments: tuple[Argument, ...]


@dataclasses.dataclass(frozen=True)
class Base:
    name: str
    cls: type
    default: str | None
    components: tuple[Component, ...]


def catalogue(base_name: str | None = None) -> list[Base]:
    """Every registered component (of ``base_name`` only, when given), bases sorted by name: what
    ``distrain list`` prints and the documentation's generated reference renders."""
    from distrain.config.schema import parameters_of
    from distrain.registry import Registrable

    bases = {base.__name__: base for base in Registrable._registries}
    if base_name:
        if base_name not in bases:
            raise UsageError(f"unknown base class {base_name!r}; choose one of: {', '.join(sorted(bases))}")
        bases = {base_name: bases[base_name]}
    found = []
    for name in sorted(bases):
        base = bases[name]
        components = []
        for registered in base.list_available():
            cls = base.by_name(registered)
            params, _ = parameters_of(cls)
            arguments = tuple(
                Argument(param.name, describe_annotation(param.annotation),
                         "required" if param.required else f"default {param.default!r}",
                         describe_constraints(param.annotation))
                for param in params)
            components.append(Component(registered, cls, summary(cls), arguments))
        found.append(Base(name, base, base.default_implementation, tuple(components)))
    return found


def run(args: argparse.Namespace) -> int:
    from distrain.plugins import import_plugins

    import_plugins(args.include_package)
    for base in catalogue(args.base):
        print(base.name + (f" (default: {base.default})" if base.default else ""))
        for component in base.components:
            print(f"  {component.name}" + (f"  - {component.summary}" if component.summary else ""))
            for argument in component.arguments:
                print(f"      {argument.line()}")
    return 0
