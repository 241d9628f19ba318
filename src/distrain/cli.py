"""Command-line parsing only; every command's work lives in :mod:`distrain.commands`.

Nothing heavy is imported here, so ``distrain --help`` answers at once.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "train": "distrain.commands.train",
    "check": "distrain.commands.check",
    "list": "distrain.commands.list_components",
    "evaluate": "distrain.commands.evaluate",
    "predict": "distrain.commands.predict",
    "shard": "distrain.commands.shard",
    "serve": "distrain.commands.serve",
}

#: exit status for bad input (config, data, archive, flags); 1 is for failures during a run
BAD_INPUT = 2


def _config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="experiment file (jsonnet or JSON)")
    parser.add_argument(
        "-o", "--overrides", default=None,
        help='JSON object merged into the config; keys may be dotted paths, e.g. \'{"trainer.num_epochs": 3}\'',
    )
    parser.add_argument(
        "--ext-var", action="append", default=[], metavar="KEY=VALUE",
        help="a jsonnet std.extVar value (repeatable; environment variables are visible too)",
    )
    _plugin_arguments(parser)


def _plugin_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include-package", action="append", default=[], metavar="MODULE",
        help="import MODULE first so its registered components exist (repeatable)",
    )


def _archive_data_arguments(parser: argparse.ArgumentParser, output: str) -> None:
    parser.add_argument("archive", help="model.tar.gz written by distrain train")
    parser.add_argument("data", help="data file, read with the archive's (validation) dataset reader")
    parser.add_argument("--output-file", required=True, help=f"where to write {output}")
    parser.add_argument(
        "-o", "--overrides", default=None,
        help='JSON merged into the archived config, e.g. \'{"distributed": {"cuda_devices": [-1, -1]}}\'',
    )
    parser.add_argument("--batch-size", type=int, default=None, help="instances per worker per batch")
    _plugin_arguments(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="distrain",
        description="Train PyTorch models from jsonnet configs, on one device or many.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    train = commands.add_parser("train", help="train a model from a config")
    _config_arguments(train)
    train.add_argument("-s", "--serialization-dir", required=True, help="output directory")
    mode = train.add_mutually_exclusive_group()
    mode.add_argument("-f", "--force", action="store_true", help="delete the output directory's contents first")
    mode.add_argument(
        "-r", "--recover", action="store_true",
        help="resume the run in the output directory from its latest checkpoint",
    )

    check = commands.add_parser("check", help="validate a config and build everything short of training")
    _config_arguments(check)

    evaluate = commands.add_parser("evaluate", help="write an archived model's loss and metrics on a data file")
    _archive_data_arguments(evaluate, "the metrics as JSON")
    predict = commands.add_parser("predict", help="write an archived model's predictions, one JSON line per input")
    _archive_data_arguments(predict, "one JSON line per input, in input order")

    listing = commands.add_parser("list", help="list registered components and their arguments")
    listing.add_argument("base", nargs="?", help="only this base class, e.g. Model or DatasetReader")
    _plugin_arguments(listing)

    shard = commands.add_parser("shard", help="split a JSON-lines or text file into N balanced shard files")
    importlib.import_module(COMMANDS["shard"]).add_arguments(shard)

    serve = commands.add_parser("serve", help="serve an archived model over HTTP with dynamic request batching")
    importlib.import_module(COMMANDS["serve"]).add_arguments(serve)
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from distrain import __version__

        print(f"distrain {__version__}")
        return
    if not args.command:
        parser.print_help()
        sys.exit(BAD_INPUT)
    module = importlib.import_module(COMMANDS[args.command])
    sys.exit(run_reporting_errors(module.run, args))


def run_reporting_errors(command, args: argparse.Namespace) -> int:
    """Run a command; bad input becomes one clear message and exit status 2, not a traceback."""
    from distrain.errors import classify

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
        if args.debug:
            raise
        status, message = classify(error)
        if status is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return status
