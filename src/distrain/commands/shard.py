"""``distrain shard INPUT --num-shards N -o DIR``: split a JSON-lines or text file into N shard files.

Non-blank lines are dealt round-robin, so shard sizes differ by at most one record, and the file is
streamed (memory stays flat). Lines are copied byte for byte, not parsed. Shards are named
``STEM-00000-of-0000N.SUFFIX`` so ``DIR/STEM-*.SUFFIX`` (or ``DIR`` itself) is the sharded reader's path.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path

from distrain.errors import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="a JSON-lines or text file (one record per line)")
    parser.add_argument("-n", "--num-shards", type=int, required=True, help="how many shard files to write")
    parser.add_argument("-o", "--output-dir", required=True, help="directory for the shard files")
    parser.add_argument("-f", "--force", action="store_true", help="overwrite shard files that already exist")


def shard_names(input_path: Path, num_shards: int) -> list[str]:
    suffix = "".join(input_path.suffixes) or ".txt"
    stem = input_path.name[: -len("".join(input_path.suffixes))] if input_path.suffixes else input_path.name
    return [f"{stem}-{i:05d}-of-{num_shards:05d}{suffix}" for i in range(num_shards)]


def split_file(input_path: Path, num_shards: int, output_dir: Path, force: bool = False) -> list[tuple[Path, int]]:
    """Write the shards; return each one's path and record count."""
    if not input_path.is_file():
        raise UsageError(f"input file not found: {input_path}")
    if num_shards < 1:
        raise UsageError(f"--num-shards must be at least 1, got {num_shards}")
    if output_dir.exists() and not output_dir.is_dir():
        raise UsageError(f"--output-dir {output_dir} exists and is not a directory")
    paths = [output_dir / name for name in shard_names(input_path, num_shards)]
    existing = [p for p in paths if p.exists()]
    if existing and not force:
        raise UsageError(f"{existing[0]} already exists; pass --force to overwrite")
    output_dir.mkdir(parents=True, exist_ok=True)
    counts = [0] * num_shards
    written = 0
    with ExitStack() as stack, open(input_path, "rb") as lines:
        outputs = [stack.enter_context(open(p, "wb")) for p in paths]
        for line in lines:
            if not line.strip():
                continue
            target = written % num_shards
            outputs[target].write(line if line.endswith(b"\n") else line + b"\n")
            counts[target] += 1
            written += 1
    return list(zip(paths, counts))


def run(args: argparse.Namespace) -> int:
    shards = split_file(Path(args.input), args.num_shards, Path(args.output_dir), args.force)
    total = sum(count for _, count in shards)
    for path, count in shards:
        print(f"{path}\t{count}")
    print(f"wrote {total} records into {len(shards)} shard(s) in {args.output_dir}")
    return 0
