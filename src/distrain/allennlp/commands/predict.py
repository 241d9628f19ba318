"""``allennlp predict ARCHIVE INPUT [--output-file F] [--predictor NAME] [--use-dataset-reader] ...``.

With ``--use-dataset-reader`` and no predictor named, this is ``distrain predict`` (the archive's reader reads
INPUT; a ``distributed`` block in ``-o`` spreads it over workers). Otherwise, as in AllenNLP, INPUT holds one
JSON object per line (``-``: standard input), and a :class:`~distrain.allennlp.predictor.Predictor` (the one
named, else the model's default, else the base class) turns each into an instance and its outputs into a line.
Each prediction is printed too, unless ``--silent``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from typing import Any, Iterator

from distrain.allennlp.commands.translate import (add_archive_and_input, add_file_friendly_logging, add_overrides,
                                                  file_friendly_logging, overrides_with_device, refuse, run_distrain)
from distrain.errors import UsageError

NO_COUNTERPART = {
    "weights_file": "distrain predicts with the weights in the archive; archive the weights you want",
    "multitask_head": "distrain has no multitask models",
}


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    add_archive_and_input(parser, "JSON lines (or, with --use-dataset-reader, the reader's data); - is stdin",
                          "where to write one JSON line per input")
    parser.add_argument("--batch-size", type=int, default=None, help="inputs per batch (default: 1, or the "
                        "archive's loader with --use-dataset-reader)")
    parser.add_argument("--silent", action="store_true", help="do not print the predictions")
    parser.add_argument("--cuda-device", type=int, default=-1, help="the GPU to predict on (-1: the CPU)")
    parser.add_argument("--use-dataset-reader", action="store_true", help="read INPUT with the archive's reader")
    parser.add_argument("--dataset-reader-choice", choices=("train", "validation"), default="validation",
                        help="which of the archive's readers reads INPUT")
    add_overrides(parser)
    parser.add_argument("--predictor", default=None, help="a registered Predictor's name")
    parser.add_argument("--predictor-args", default="", help="JSON object of the predictor's constructor arguments")
    add_file_friendly_logging(parser)
    parser.add_argument("--weights-file", default=None, help="(no counterpart in distrain: refused)")
    parser.add_argument("--multitask-head", default=None, help="(no counterpart in distrain: refused)")


def run(args: argparse.Namespace) -> int:
    refuse(args, NO_COUNTERPART)
    if args.batch_size is not None and args.batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.silent and not args.output_file:
        print("--silent specified without --output-file.", file=sys.stderr)
    file_friendly_logging(args.file_friendly_logging)
    by_reader = args.use_dataset_reader and not args.predictor and not args.predictor_args
    if by_reader and args.dataset_reader_choice == "validation" and args.input_file != "-":
        return predict_with_distrain(args)
    return predict_with_predictor(args)


def predict_with_distrain(args: argparse.Namespace) -> int:
    overrides = overrides_with_device(args.overrides, args.cuda_device)
    flags = (["-o", overrides] if overrides else []) + (["--batch-size", str(args.batch_size)] if args.batch_size else [])
    with tempfile.TemporaryDirectory(prefix="allennlp-predict-") as scratch:
        output = args.output_file or os.path.join(scratch, "predictions.jsonl")
        status = run_distrain(["predict", args.archive_file, args.input_file, "--output-file", output, *flags],
                              args.include_package)
        if not args.silent:
            with open(output, encoding="utf-8") as lines:
                for index, line in enumerate(lines):
                    print(f"prediction {index}: {line}", end="")
    return status


def predict_with_predictor(args: argparse.Namespace) -> int:
    from distrain.allennlp.predictor import Predictor
    from distrain.allennlp.common.util import lazy_groups_of
    from distrain.plugins import import_plugins

    import_plugins(args.include_package)
    extra = _predictor_args(args.predictor_args)
    predictor = Predictor.from_path(args.archive_file, args.predictor, cuda_device=args.cuda_device,
                                    dataset_reader_to_load=args.dataset_reader_choice, import_plugins=False,
                                    overrides=overrides_with_device(args.overrides, None) or "", **extra)
    output = open(args.output_file, "w", encoding="utf-8") if args.output_file else None
    try:
        index = 0
        for batch in lazy_groups_of(_inputs(args, predictor), args.batch_size or 1):
            where = f"{args.input_file}:{batch[0][0]}" + (f"-{batch[-1][0]}" if len(batch) > 1 else "")
            inputs = [item for _, item in batch]
            try:
                if args.use_dataset_reader:
                    outputs = predictor.predict_batch_instance(inputs)
                else:
                    outputs = predictor.predict_batch_json(inputs)
            except KeyError as error:  # the predictor's _json_to_instance read a key the input lacks
                from distrain.data.reader import DataError

                raise DataError(f"{where}: no key {error.args[0]!r} in the input") from None
            except ValueError as error:
                from distrain.data.reader import DataError

                raise DataError(f"{where}: {error}") from None
            for model_input, prediction in zip(inputs, outputs):
                line = predictor.dump_line(prediction)
                if output is not None:
                    output.write(line)
                if not args.silent:
                    shown = model_input if isinstance(model_input, dict) else "instance"
                    print(f"input {index}: {json.dumps(shown) if isinstance(shown, dict) else shown}\n"
                          f"prediction: {line}", end="")
                index += 1
    finally:
        if output is not None:
            output.close()
    return 0


def _inputs(args: argparse.Namespace, predictor: Any) -> Iterator[tuple[int, Any]]:
    """``(line or position, input)``: the reader's instances, or the JSON objects of the input's lines."""
    if args.use_dataset_reader:
        if args.input_file == "-":
            raise UsageError("--use-dataset-reader reads a file; give its path instead of -")
        yield from enumerate(predictor._dataset_reader.read(args.input_file), start=1)
        return
    if args.input_file != "-" and not os.path.isfile(args.input_file):
        from distrain.data.reader import DataError

        raise DataError(f"input file not found: {args.input_file}")
    lines = sys.stdin if args.input_file == "-" else open(args.input_file, encoding="utf-8")
    try:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield number, predictor.load_line(line)
            except json.JSONDecodeError as error:
                from distrain.data.reader import DataError

                raise DataError(f"{args.input_file}:{number}: not a JSON object ({error.msg})") from None
    finally:
        if lines is not sys.stdin:
            lines.close()


def _predictor_args(text: str) -> dict[str, Any]:
    from distrain.config.loading import json_object_argument

    return json_object_argument(text, "--predictor-args")
