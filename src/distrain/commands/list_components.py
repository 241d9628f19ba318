"""``distrain list [BASE]``: every registered component, with its config arguments."""

from __future__ import annotations

import argparse
import inspect
import re

from distrain.commands.arguments import add_plugin_arguments
from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", nargs="?", help="only this base class, e.g. Model or DatasetReader")
    add_plugin_arguments(parser)


def describe_annotation(annotation) -> str:
    """``Optional[Lazy[distrain.training.optimizers.Optimizer]]`` → ``Optional[Lazy[Optimizer]]``."""
    text = getattr(annotation, "__name__", None) if inspect.isclass(annotation) else None
    text = text or str(annotation).replace("typing.", "")
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)", r"\1", text).replace("NoneType", "None")


def summary(cls: type) -> str:
    """The first line of the class's own docstring (not one inherited from a base class)."""
    doc = cls.__dict__.get("__doc__") or ""
    return inspect.cleandoc(doc).split("\n")[0] if doc else ""


def run(args: argparse.Namespace) -> int:
    from distrain.config.schema import parameters_of
    from distrain.plugins import import_plugins
    from distrain.registry import Registrable

    import_plugins(args.include_package)
    bases = {base.__name__: base for base in Registrable._registries}
    if args.base:
        if args.base not in bases:
            raise UsageError(f"unknown base class {args.base!r}; choose one of: {', '.join(sorted(bases))}")
        bases = {args.base: bases[args.base]}
    for base_name in sorted(bases):
        base = bases[base_name]
        default = f" (default: {base.default_implementation})" if base.default_implementation else ""
        print(f"{base_name}{default}")
        for name in base.list_available():
            cls = base.by_name(name)
            params, _ = parameters_of(cls)
            doc = summary(cls)
            print(f"  {name}" + (f"  - {doc}" if doc else ""))
            for param in params:
                default_text = "required" if param.required else f"default {param.default!r}"
                print(f"      {param.name}: {describe_annotation(param.annotation)} ({default_text})")
    return 0
