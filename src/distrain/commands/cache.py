"""``distrain cache list`` and ``distrain cache prune [--older-than 30d] [--max-size 20G]``.

``list`` shows each dataset cache entry: its key, size, last use, whether a run uses it now, and the
data it came from. ``prune`` deletes entries not used within ``--older-than``, then the least recently
used ones until the cache fits ``--max-size``; an entry a running job uses (or builds) is never
deleted. Every deletion, and every entry kept because it is in use, is printed.
"""

from __future__ import annotations

import argparse
import re
import time

from distrain.errors import UsageError

UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="entries, sizes, last use and the data they came from")
    prune = actions.add_parser("prune", help="delete old entries, or the least recently used beyond a size")
    prune.add_argument("--older-than", default=None, help="delete entries unused for this long, e.g. 30d, 12h")
    prune.add_argument("--max-size", default=None, help="then delete least recently used entries until the cache fits, e.g. 20G")
    prune.add_argument("--dry-run", action="store_true", help="print what would be deleted, delete nothing")


def parse_size(text: str) -> int:
    """``20G`` -> bytes (binary units: K, M, G, T; an optional trailing ``B`` or ``iB``)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not match:
        raise UsageError(f"--max-size {text!r}: expected a size such as 500M or 20G")
    return int(float(match.group(1)) * UNITS[match.group(2)])


def parse_duration(text: str) -> float:
    """``30d`` -> seconds (s, m, h, d, w)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not match:
        raise UsageError(f"--older-than {text!r}: expected a duration such as 30d, 12h or 90m")
    return float(match.group(1)) * DURATIONS[match.group(2)]


def human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def choose(entries: list[dict], now: float, older_than: float | None, max_size: int | None) -> list[dict]:
    """The entries to delete: unused for ``older_than`` seconds, then least recently used beyond ``max_size``."""
    doomed = [e for e in entries if older_than is not None and now - e["last_used"] > older_than]
    if max_size is not None:
        remaining = sorted((e for e in entries if e not in doomed), key=lambda e: e["last_used"])
        total = sum(e["size"] for e in remaining)
        for entry in remaining:
            if total <= max_size:
                break
            doomed.append(entry)  # one in use is reported as kept, and still counts
            if not entry["in_use"]:
                total -= entry["size"]
    return doomed


def run(args: argparse.Namespace) -> int:
    from distrain.data.cache import DatasetCache, cache_root

    root = cache_root()
    if root is None:
        raise UsageError("the dataset cache is disabled (DISTRAIN_CACHE is off)")
    cache = DatasetCache(root)
    entries = cache.entries()
    if args.action == "list":
        print(f"{root}: {len(entries)} entries, {human(sum(e['size'] for e in entries))}")
        for e in entries:
            used = time.strftime("%Y-%m-%d %H:%M", time.localtime(e["last_used"]))
            state = "in use" if e["in_use"] else ""
            print(f"{e['key']}  {human(e['size']):>10}  last used {used}  {state:6}  {', '.join(map(str, e['data']))}")
        return 0
    older_than = parse_duration(args.older_than) if args.older_than else None
    max_size = parse_size(args.max_size) if args.max_size else None
    if older_than is None and max_size is None:
        raise UsageError("cache prune: give --older-than and/or --max-size")
    freed = 0
    if not args.dry_run:
        for leftover in cache.remove_leftovers():
            print(f"deleted {leftover.name} (left by a build that did not finish)")
    for entry in choose(entries, time.time(), older_than, max_size):
        if entry["in_use"] or (not args.dry_run and not cache.remove(entry["key"])):
            print(f"kept {entry['key']} ({human(entry['size'])}): in use by a running job")
            continue
        print(f"{'would delete' if args.dry_run else 'deleted'} {entry['key']} ({human(entry['size'])})")
        freed += entry["size"]
    print(f"{'would free' if args.dry_run else 'freed'} {human(freed)}")
    return 0
