"""``allennlp train PARAM_PATH -s DIR [-f | -r] [-o JSON] [--dry-run]``: ``distrain train`` (the config's
``distributed`` block starts its workers as there); ``--dry-run``: ``distrain check``, which reads the data, builds
the vocabulary and the model, and trains nothing."""

from __future__ import annotations

import argparse

from distrain.allennlp.commands.translate import (add_file_friendly_logging, add_overrides, file_friendly_logging,
                                                  overrides_with_device, refuse, run_distrain)


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("param_path", help="the experiment config (jsonnet or JSON)")
    parser.add_argument("-s", "--serialization-dir", required=True, help="where the run's files and model.tar.gz go")
    parser.add_argument("-r", "--recover", action="store_true", help="resume the run in DIR from its checkpoint")
    parser.add_argument("-f", "--force", action="store_true", help="delete DIR's contents first")
    add_overrides(parser)
    parser.add_argument("--node-rank", type=int, default=None, help="(AllenNLP's multi-node rank: see below)")
    parser.add_argument("--dry-run", action="store_true", help="read the data and build everything, train nothing")
    add_file_friendly_logging(parser)


def run(args: argparse.Namespace) -> int:
    refuse(args, {"node_rank": "distrain starts a multi-node job with torchrun or srun, which give each node its "
                               "rank (see the distributed training guide); run `distrain train` under one of them"})
    file_friendly_logging(args.file_friendly_logging)
    overrides = overrides_with_device(args.overrides, None)
    flags = ["-o", overrides] if overrides else []
    if args.dry_run:
        return run_distrain(["check", args.param_path, *flags], args.include_package)
    mode = ["-f"] if args.force else ["-r"] if args.recover else []
    if args.force and args.recover:
        from distrain.errors import UsageError

        raise UsageError("-f/--force and -r/--recover cannot be used together")
    return run_distrain(["train", args.param_path, "-s", args.serialization_dir, *mode, *flags], args.include_package)
