"""``allennlp evaluate ARCHIVE INPUT [--output-file F] [--cuda-device N] [--batch-size B] [-o JSON]``:
``distrain evaluate`` (metrics printed; written to ``--output-file`` when given)."""

from __future__ import annotations

import argparse
import os
import tempfile

from distrain.allennlp.commands.translate import (add_archive_and_input, add_file_friendly_logging, add_overrides,
                                                  file_friendly_logging, overrides_with_device, refuse, run_distrain)

#: AllenNLP's evaluate flags that distrain's evaluate has nothing for, and what to do instead
NO_COUNTERPART = {
    "weights_file": "distrain evaluates the weights in the archive; archive the weights you want to evaluate",
    "predictions_output_file": "run `allennlp predict` (or `distrain predict`) for the predictions",
    "batch_weight_key": "distrain weights every batch by its instances",
    "extend_vocab": "distrain evaluates with the archive's vocabulary as it is",
    "embedding_sources_mapping": "distrain evaluates with the archive's vocabulary as it is",
    "auto_names": "name each --output-file yourself",
}


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    add_archive_and_input(parser, "data, read with the archive's validation dataset reader",
                          "where to write the metrics as JSON")
    parser.add_argument("--cuda-device", type=int, default=-1, help="the GPU to evaluate on (-1: the CPU)")
    parser.add_argument("--batch-size", type=int, default=None, help="instances per batch")
    add_overrides(parser)
    add_file_friendly_logging(parser)
    for flag in ("--weights-file", "--predictions-output-file", "--batch-weight-key", "--embedding-sources-mapping",
                 "--auto-names"):
        parser.add_argument(flag, default=None, help="(no counterpart in distrain: refused)")
    parser.add_argument("--extend-vocab", action="store_true", help="(no counterpart in distrain: refused)")


def run(args: argparse.Namespace) -> int:
    refuse(args, NO_COUNTERPART)
    file_friendly_logging(args.file_friendly_logging)
    overrides = overrides_with_device(args.overrides, args.cuda_device)
    flags = (["-o", overrides] if overrides else []) + (["--batch-size", str(args.batch_size)] if args.batch_size else [])
    with tempfile.TemporaryDirectory(prefix="allennlp-evaluate-") as scratch:
        output = args.output_file or os.path.join(scratch, "metrics.json")
        return run_distrain(["evaluate", args.archive_file, args.input_file, "--output-file", output, *flags],
                            args.include_package)
