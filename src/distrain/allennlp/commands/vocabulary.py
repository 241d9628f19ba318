"""``allennlp build-vocab PARAM_PATH OUTPUT.tar.gz [-f]`` and ``allennlp count-instances PARAM_PATH``: the
vocabulary distrain's training would build from the config's data (AllenNLP's directory format, under
``vocabulary/`` in the archive, which a ``{"type": "from_files"}`` vocabulary reads), and the number of
instances one epoch of training reads."""

from __future__ import annotations

import argparse
import json
import os
import tarfile
import tempfile

from distrain.allennlp.commands.translate import add_overrides
from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("param_path", help="the experiment config")
    if name == "build-vocab":
        parser.add_argument("output_path", help="the vocabulary archive to write (.tar.gz)")
        parser.add_argument("-f", "--force", action="store_true", help="replace OUTPUT if it exists")
    add_overrides(parser)


def run(args: argparse.Namespace) -> int:
    return build_vocab(args) if args.command == "build-vocab" else count_instances(args)


def _resolved(args: argparse.Namespace):
    from distrain.allennlp.commands.translate import overrides_with_device
    from distrain.config.loading import load_config
    from distrain.experiment.plan import validate_experiment

    config = load_config(args.param_path, overrides_with_device(args.overrides, None))
    return validate_experiment(config, args.include_package)[1]


def build_vocab(args: argparse.Namespace) -> int:
    if not args.output_path.endswith(".tar.gz"):
        raise UsageError(f"build-vocab: the output path must end with .tar.gz, got {args.output_path}")
    if os.path.exists(args.output_path) and not args.force:
        raise UsageError(f"build-vocab: {args.output_path} already exists; use --force to replace it")
    from distrain.data.vocabulary_files import write_vocabulary_directory
    from distrain.experiment.assemble import prepare_for_workers

    vocab = prepare_for_workers(_resolved(args), None).vocab
    folder = os.path.dirname(os.path.abspath(args.output_path))
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-vocab-") as scratch:
        write_vocabulary_directory(vocab, os.path.join(scratch, "vocabulary"))
        packed = os.path.join(scratch, "vocabulary.tar.gz")
        with tarfile.open(packed, "w:gz") as archive:
            archive.add(os.path.join(scratch, "vocabulary"), arcname="vocabulary")
        os.replace(packed, args.output_path)
    print(f"Success! Vocab saved to {args.output_path}")
    print('You can now set the "vocabulary" entry of your training config to:')
    print(json.dumps({"type": "from_files", "directory": os.path.abspath(args.output_path)}))
    return 0


def count_instances(args: argparse.Namespace) -> int:
    train = _resolved(args).data_plan.train
    count = sum(1 for _ in train.reader.read(train.path))
    print(f"Success! One epoch of training contains {count} instances.")
    return 0
