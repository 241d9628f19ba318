"""``distrain schema [-o FILE]``: the JSON Schema of a training config (every registered component),
for editors' completion and checking; see :mod:`distrain.config.json_schema`."""

from __future__ import annotations

import argparse

from distrain.commands.arguments import add_plugin_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="write the schema here (default: stdout)")
    add_plugin_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from distrain.experiment.plan import experiment_schema
    from distrain.plugins import import_plugins

    import_plugins(args.include_package)
    text = json.dumps(experiment_schema(), indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0
