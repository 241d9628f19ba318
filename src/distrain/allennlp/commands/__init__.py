"""The ``allennlp`` command, where distrain serves ``allennlp``: AllenNLP's subcommands and flags, each run by
distrain's own command (``allennlp train`` is ``distrain train``, ``--dry-run`` is ``distrain check``, ...).

A flag distrain has no counterpart for is refused with one line naming it, never ignored. Where a real
AllenNLP is installed this command refuses to run (exit 2): its own ``allennlp`` command is the one to use.
Like ``distrain``'s, the table below imports no subcommand module until one is asked for.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from distrain.compat import allennlp_imports
from distrain.errors import BAD_INPUT

#: subcommand -> (module, one-line help)
SUBCOMMANDS = {
    "train": ("distrain.allennlp.commands.train", "train a model (distrain train; --dry-run: distrain check)"),
    "evaluate": ("distrain.allennlp.commands.evaluate", "an archived model's metrics on a data file (distrain evaluate)"),
    "predict": ("distrain.allennlp.commands.predict", "an archived model's predictions, one JSON line per input"),
    "find-lr": ("distrain.allennlp.commands.find_lr", "AllenNLP's learning-rate finder (no counterpart in distrain)"),
    "build-vocab": ("distrain.allennlp.commands.vocabulary", "the vocabulary of a config's data, as a .tar.gz"),
    "count-instances": ("distrain.allennlp.commands.vocabulary", "how many training instances a config reads"),
    "print-results": ("distrain.allennlp.commands.print_results", "metrics.json files under a folder, as CSV"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every subcommand's parser (with ``only``, that subcommand's flags alone, the others listed)."""
    parser = argparse.ArgumentParser(prog="allennlp", description="AllenNLP's commands, run by distrain.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        command = commands.add_parser(name, help=help_text, description=help_text)
        if only is None or name == only:
            module = importlib.import_module(module_name)
            module.add_arguments(command, name)
            command.set_defaults(run=module.run)
            command.add_argument("--include-package", action="append", default=[], metavar="MODULE",
                                 help="import MODULE (and its submodules) first, so its registered components exist")
    return parser


def main(argv: list[str] | None = None) -> None:
    if not allennlp_imports.serves():
        print("error: a real AllenNLP is installed in this environment; run its own `allennlp` command (distrain's "
              "stands aside for it), or use `distrain` commands", file=sys.stderr)
        sys.exit(BAD_INPUT)
    from distrain.cli import parse_command_line, run_reporting_errors

    args = parse_command_line(argv, SUBCOMMANDS, build_parser, "allennlp (distrain {})")
    if args is None:
        return

    sys.exit(run_reporting_errors(args.run, args))
