"""``allennlp find-lr``: AllenNLP's learning-rate range test. distrain has no such command; the flags are
accepted so the refusal is one line naming what to do instead, not an argument error."""

from __future__ import annotations

import argparse

from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("param_path", nargs="?", help="the experiment config")
    parser.add_argument("-s", "--serialization-dir", default=None)
    parser.add_argument("-o", "--overrides", default="")
    for flag in ("--start-lr", "--end-lr", "--num-batches", "--stopping-factor"):
        parser.add_argument(flag, default=None)
    parser.add_argument("--linear", action="store_true")
    parser.add_argument("-f", "--force", action="store_true")
    parser.add_argument("--file-friendly-logging", action="store_true")


def run(args: argparse.Namespace) -> int:
    raise UsageError("find-lr: distrain has no learning-rate finder; search the learning rate with "
                     "`distrain tune` (an Optuna search over the config) instead")
