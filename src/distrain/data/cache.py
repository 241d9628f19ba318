"""The shared dataset cache: read and index once, memory-map everywhere.

An entry is a directory named by a fingerprint of what determines its content: the data-related
config blocks (readers, paths, vocabulary), the input files (path, size, modification time; the
content hash for files under 1 MiB) and the distrain version. It holds ``vocabulary/``, one indexed
dataset per split and ``meta.json``; it is written under a temporary name and renamed, so a reader
never sees half an entry. Location: ``$DISTRAIN_CACHE`` or ``~/.cache/distrain/datasets``;
``DISTRAIN_CACHE=off`` (or the experiment key ``"dataset_cache": false``) disables it.
"""

from __future__ import annotations

import glob
import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterable

logger = logging.getLogger(__name__)

SMALL_FILE = 1 << 20
DISABLED = {"", "0", "off", "false", "no", "none"}


def cache_root() -> Path | None:
    """Where entries live, or None when the environment disables the cache."""
    setting = os.environ.get("DISTRAIN_CACHE")
    if setting is not None:
        return None if setting.strip().lower() in DISABLED else Path(setting).expanduser()
    return Path.home() / ".cache" / "distrain" / "datasets"


def input_files(path: str | Path) -> list[Path]:
    """The files a data path names: itself, every file under a directory, or a glob's matches."""
    path = Path(path)
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())


def describe_file(path: Path) -> dict[str, Any]:
    stat = path.stat()
    description: dict[str, Any] = {"path": str(path.resolve()), "size": stat.st_size}
    if stat.st_size < SMALL_FILE:
        description["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    else:
        description["mtime_ns"] = stat.st_mtime_ns
    return description


def code_files(objects: Iterable[Any], depth: int = 3) -> dict[str, str]:
    """Content hashes of the source files defining ``objects``' classes and their attributes' classes,
    so editing a reader or tokenizer (a plugin included) invalidates its cached data."""
    import inspect

    found: dict[str, str] = {}

    def visit(value: Any, level: int) -> None:
        if level > depth or value is None or isinstance(value, (str, bytes, int, float, bool, Path)):
            return
        if isinstance(value, (list, tuple, set)):
            for item in value:
                visit(item, level + 1)
            return
        if isinstance(value, dict):
            for item in value.values():
                visit(item, level + 1)
            return
        for cls in type(value).__mro__:
            if cls.__module__ in ("builtins", "abc", "typing"):
                continue
            try:
                source = inspect.getsourcefile(cls)
            except TypeError:
                continue
            if source and source not in found and Path(source).is_file():
                found[source] = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        for item in getattr(value, "__dict__", {}).values():
            visit(item, level + 1)

    for obj in objects:
        visit(obj, 0)
    return dict(sorted(found.items()))


def fingerprint(config: dict[str, Any], paths: Iterable[str | Path], code: Iterable[Any] = ()) -> str:
    """A stable key for the dataset that ``config`` reading ``paths`` produces (``code``: the readers)."""
    from distrain import __version__

    key = {
        "version": __version__,
        "config": config,
        "code": code_files(code),
        "inputs": [[describe_file(f) for f in input_files(p)] for p in paths],
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:32]


class DatasetCache:
    """Entries under ``root``; :meth:`lookup` returns a complete entry or None."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def entry(self, key: str) -> Path:
        return self.root / key

    def lookup(self, key: str) -> Path | None:
        entry = self.entry(key)
        return entry if (entry / "meta.json").is_file() else None

    def write(self, key: str, splits: dict[str, Any], vocab: Any, meta: dict[str, Any]) -> Path:
        """Save ``splits`` (name → IndexedDataset or None) and ``vocab`` atomically; return the entry."""
        self.root.mkdir(parents=True, exist_ok=True)
        temporary = self.root / f".{key}.{os.getpid()}.tmp"
        shutil.rmtree(temporary, ignore_errors=True)
        vocab.save(temporary / "vocabulary")
        for name, dataset in splits.items():
            if dataset is not None:
                dataset.save(temporary / name)
        meta = {**meta, "created": time.strftime("%Y-%m-%dT%H:%M:%S"), "splits": {
            name: (len(d) if d is not None else None) for name, d in splits.items()}}
        (temporary / "meta.json").write_text(json.dumps(meta, indent=2, default=str))
        entry = self.entry(key)
        try:
            os.rename(temporary, entry)
        except OSError:
            # Another process finished the same entry first; theirs is as good as ours.
            shutil.rmtree(temporary, ignore_errors=True)
            if self.lookup(key) is None:
                raise
        return entry

    def load(self, entry: Path) -> tuple[Any, dict[str, Any]]:
        """The vocabulary and the memory-mapped splits of an entry."""
        from distrain.data.dataset import IndexedDataset
        from distrain.data.vocabulary import Vocabulary

        meta = json.loads((entry / "meta.json").read_text())
        vocab = Vocabulary.load(entry / "vocabulary")
        splits = {
            name: IndexedDataset.load(entry / name, mmap=True) if size is not None else None
            for name, size in meta["splits"].items()
        }
        return vocab, splits
