"""``allennlp print-results PATH -k KEY ... [-m metrics.json]``: one CSV line per metrics file under PATH
(``N/A`` where a run lacks a key), as AllenNLP prints them; distrain's runs write the same ``metrics.json``."""

from __future__ import annotations

import argparse
import json
import os

from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("path", help="a folder searched recursively for run folders")
    parser.add_argument("-k", "--keys", nargs="+", default=None, help="the metrics to print")
    parser.add_argument("-m", "--metrics-filename", default="metrics.json", help="the metrics file's name")


def run(args: argparse.Namespace) -> int:
    if not args.keys:
        raise UsageError("print-results: name the metrics to print with -k/--keys, e.g. -k best_validation_accuracy")
    if not os.path.isdir(args.path):
        raise UsageError(f"print-results: {args.path} is not a folder")
    found = {}
    for root, _folders, files in os.walk(args.path):
        if args.metrics_filename in files:
            path = os.path.join(root, args.metrics_filename)
            with open(path, encoding="utf-8") as metrics:
                found[path] = json.load(metrics)
    print(f"model_run, {', '.join(args.keys)}")
    for path in sorted(found):
        print(f"{path}, {', '.join(str(found[path].get(key, 'N/A')) for key in args.keys)}")
    return 0
