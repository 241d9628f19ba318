"""What the ``allennlp`` subcommands share: running a distrain command with the flags they translate to,
merging ``--cuda-device`` into the overrides, refusing flags with no counterpart, file-friendly logging."""

from __future__ import annotations

import argparse
import json
import os

from distrain.errors import UsageError


def run_distrain(words: list[str], include_packages: list[str]) -> int:
    """``distrain WORDS --include-package ...``, parsed by distrain's own parser and run in this process."""
    from distrain.cli import COMMANDS, build_parser

    command = words[0]
    packages = [word for package in include_packages for word in ("--include-package", package)]
    args = build_parser(command).parse_args([*words, *packages])
    module = __import__(COMMANDS[command][0], fromlist=["run"])
    return module.run(args) or 0


def refuse(args: argparse.Namespace, flags: dict[str, str]) -> None:
    """A :class:`UsageError` for the first of ``flags`` (attribute -> why) that was given."""
    for attribute, why in flags.items():
        if getattr(args, attribute, None) not in (None, False, [], ""):
            flag = "--" + attribute.replace("_", "-")
            raise UsageError(f"{flag}: {why}")


def overrides_with_device(overrides: str | None, cuda_device: int | None) -> str | None:
    """``-o`` as distrain reads it (JSON; AllenNLP's jsonnet overrides are evaluated), with ``--cuda-device N``
    (N >= 0) as a one-worker ``distributed`` block on that GPU."""
    if cuda_device is None or cuda_device < 0:
        return _as_json(overrides) if overrides else overrides
    from distrain.allennlp.common.params import parse_overrides
    from distrain.config.loading import apply_overrides

    merged = apply_overrides(parse_overrides(overrides), {"distributed": {"cuda_devices": [cuda_device]}})
    return json.dumps(merged)


def _as_json(overrides: str) -> str:
    from distrain.allennlp.common.params import parse_overrides

    return json.dumps(parse_overrides(overrides))


def file_friendly_logging(enabled: bool) -> None:
    """AllenNLP's ``--file-friendly-logging``: progress bars update every 10 s, not every step, so a log file
    is not filled with them (tqdm reads ``TQDM_MININTERVAL``; workers inherit it)."""
    if enabled:
        os.environ.setdefault("TQDM_MININTERVAL", "10")


def add_file_friendly_logging(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file-friendly-logging", action="store_true",
                        help="progress bars that update every 10 s, for logs written to files")


def add_archive_and_input(parser: argparse.ArgumentParser, input_help: str, output_help: str) -> None:
    """The positional archive and input file of ``evaluate`` and ``predict``, and where their output goes."""
    parser.add_argument("archive_file", help="model.tar.gz of a trained run")
    parser.add_argument("input_file", help=input_help)
    parser.add_argument("--output-file", default=None, help=output_help)


def add_overrides(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--overrides", default="",
                        help='a JSON (or jsonnet) object merged into the config, e.g. \'{"trainer.num_epochs": 3}\'')
