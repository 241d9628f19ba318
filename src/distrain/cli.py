"""The command table and error reporting; every command's flags and work live in its own module
under :mod:`distrain.commands`. Command modules are light, so ``distrain --help`` answers at once."""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Callable, Container

from distrain.errors import BAD_INPUT, exit_status

#: name -> (module, one-line help)
COMMANDS = {
    "train": ("distrain.commands.train", "train a model from a config"),
    "check": ("distrain.commands.check", "validate a config and build everything short of training"),
    "evaluate": ("distrain.commands.evaluate", "write an archived model's loss and metrics on a data file"),
    "predict": ("distrain.commands.predict", "write an archived model's predictions, one JSON line per input"),
    "export": ("distrain.commands.export", "write an archived model as a folder plain transformers (or peft) loads"),
    "list": ("distrain.commands.list_components", "list registered components and their arguments"),
    "shard": ("distrain.commands.shard", "split a JSON-lines or text file into N balanced shard files"),
    "schema": ("distrain.commands.schema", "write the JSON Schema of a training config (for editors)"),
    "plot": ("distrain.commands.plot", "plot training and validation curves of one or more runs"),
    "tune": ("distrain.commands.tune", "hyperparameter search over a config with Optuna"),
    "cache": ("distrain.commands.cache", "list or prune the shared dataset cache"),
    "serve": ("distrain.commands.serve", "serve an archived model over HTTP with dynamic batching"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or with ``only`` (a command's name) that command's flags alone: the others
    are listed with their help line, their modules not imported."""
    parser = argparse.ArgumentParser(
        prog="distrain",
        description="Train PyTorch models from jsonnet configs, on one device or many.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        command = commands.add_parser(name, help=help_text)
        if only is None or name == only:
            importlib.import_module(module_name).add_arguments(command)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parse_command_line(argv, COMMANDS, build_parser, "distrain {}")
    if args is None:
        return
    from distrain.runtime.scratch import use_job_scratch

    use_job_scratch()  # a kill -9 of this command leaves no temporary file for good
    module = importlib.import_module(COMMANDS[args.command][0])
    sys.exit(run_reporting_errors(module.run, args))


def parse_command_line(argv: list[str] | None, commands: Container[str], parser_for: Callable,
                       version_line: str) -> argparse.Namespace | None:
    """``argv`` parsed by ``parser_for(command)``, which builds the flags of the command named alone (``--help``
    imports nothing else); None once ``--version`` is answered (``version_line`` formats it); no command is the
    help and a usage error."""
    words = sys.argv[1:] if argv is None else argv
    named = next((word for word in words if not word.startswith("-")), None)  # the global flags take no value
    parser = parser_for(named if named in commands else None)
    args = parser.parse_args(argv)
    if args.version:
        from distrain.version import __version__

        print(version_line.format(__version__))
        return None
    if not args.command:
        parser.print_help()
        sys.exit(BAD_INPUT)
    return args


def run_reporting_errors(command, args: argparse.Namespace) -> int:
    """Run a command; errors we report ourselves become one line and their exit status, not a traceback."""
    try:
        return command(args) or 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `distrain list | head`: the reader left; stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:  # noqa: BLE001 - everything the user sees goes through here
        status = exit_status(error)
        if args.debug or status is None:
            raise
        print(f"error: {error}", file=sys.stderr)
        return status
