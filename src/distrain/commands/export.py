"""``distrain export ARCHIVE OUT --format hf [--merge-adapters] [--force]``: a folder plain transformers loads."""

from __future__ import annotations

import argparse

from distrain.commands.arguments import add_plugin_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("archive", help="a model.tar.gz written by distrain train")
    parser.add_argument("out", help="the folder to write (must be empty or absent, unless --force)")
    parser.add_argument("--format", choices=["hf"], default="hf",
                        help="hf: a save_pretrained folder (config, safetensors, tokenizer) for transformers' Auto classes")
    parser.add_argument("--merge-adapters", action="store_true",
                        help="merge a LoRA adapter into the weights (default: a PEFT adapter folder naming the base)")
    parser.add_argument("--force", action="store_true", help="replace a non-empty OUT")
    add_plugin_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from distrain.experiment.archive.export import export_archive
    from distrain.plugins import import_plugins

    import_plugins(args.include_package)

    what = export_archive(args.archive, args.out, merge_adapters=args.merge_adapters, force=args.force)
    print(f"wrote {what} to {args.out}")
    return 0
