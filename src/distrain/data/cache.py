"""The shared dataset cache: read and index once, memory-map everywhere; safe to share.

An entry is a directory named by a fingerprint of what determines its content: the data-related
config blocks (readers, paths, vocabulary), the input files (path, size, modification time; the
content hash for files under 1 MiB) and the distrain version. It holds ``vocabulary/``, one indexed
dataset per split and ``meta.json``, which lists every file with its size, modification time and CRC-32.

Several runs may share the cache at once. A cold entry is built by one of them under an exclusive
lock (``.locks/KEY.build``) while the others wait and then reuse it; it is written under a
temporary name and renamed, so nobody sees half an entry. Opening an entry checks every file's
size, and its checksum whenever the file was modified since it was written (a cached start stays a
matter of a few ``stat`` calls); a damaged entry is rebuilt with a warning, never trained on. A run
holds a shared lock on ``.locks/KEY.use`` while it uses an entry, so ``distrain cache prune`` can tell
it is in use. Location: ``$DISTRAIN_CACHE`` or ``~/.cache/distrain/datasets``;
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
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

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
    from distrain.version import __version__

    key = {
        "version": __version__,
        "config": config,
        "code": code_files(code),
        "inputs": [[describe_file(f) for f in input_files(p)] for p in paths],
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:32]


class DamagedEntry(Exception):
    """An entry's files differ from what was recorded when it was written."""


def checksum(path: Path, block: int = 1 << 22) -> int:
    """CRC-32 of a file read in blocks (about 1 GB/s, memory flat)."""
    value = 0
    with open(path, "rb") as source:
        while chunk := source.read(block):
            value = zlib.crc32(chunk, value)
    return value


def describe_entry_files(directory: Path) -> dict[str, dict[str, int]]:
    """Every file under ``directory`` (``meta.json`` excepted): relative path -> size, mtime and CRC-32."""
    files = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        relative = path.relative_to(directory).as_posix()
        if relative != "meta.json":
            stat = path.stat()
            files[relative] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "crc32": checksum(path)}
    return files


def _lock(path: Path, exclusive: bool, blocking: bool = True) -> int | None:
    """An open descriptor holding a ``flock`` on ``path``; None if not blocking and it is taken."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if blocking else fcntl.LOCK_NB)
    try:
        fcntl.flock(descriptor, flags)
    except BlockingIOError:
        os.close(descriptor)
        return None
    return descriptor


#: shared "in use" locks this process holds, by entry; released when the process exits
_IN_USE: dict[str, int] = {}


class DatasetCache:
    """Entries under ``root``: :meth:`open` returns a verified entry, building it if needed."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def entry(self, key: str) -> Path:
        return self.root / key

    def lock_path(self, key: str, kind: str) -> Path:
        return self.root / ".locks" / f"{key}.{kind}"

    def lookup(self, key: str) -> Path | None:
        """The entry if it exists and its files match their record, else None (damage is logged)."""
        entry = self.entry(key)
        if not (entry / "meta.json").is_file():
            return None
        try:
            self.verify(entry)
        except DamagedEntry as problem:
            logger.warning("dataset cache entry %s is damaged (%s); rebuilding it", entry, problem)
            return None
        return entry

    @staticmethod
    def verify(entry: Path) -> None:
        """Raise :class:`DamagedEntry` unless every recorded file has its size and checksum.

        A file whose modification time is still the one recorded was not written since: its
        checksum is not recomputed (reading every byte of a large entry would slow every cached start).
        """
        try:
            files = json.loads((entry / "meta.json").read_text())["files"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DamagedEntry(f"meta.json unreadable: {error}") from None
        modified = []
        for relative, record in files.items():
            path = entry / relative
            try:
                stat = path.stat()
            except OSError:
                raise DamagedEntry(f"{relative} is missing") from None
            if stat.st_size != record["size"]:
                raise DamagedEntry(f"{relative} has {stat.st_size} bytes, {record['size']} were written")
            if stat.st_mtime_ns != record.get("mtime_ns"):
                modified.append((relative, record))
        for relative, record in modified:
            if checksum(entry / relative) != record["crc32"]:
                raise DamagedEntry(f"{relative} does not match its checksum")

    def open(self, key: str, build: Callable[[Path], dict[str, Any]]) -> tuple[Path, bool]:
        """A verified entry for ``key`` and whether this call built it, marked in use by this process.

        ``build(directory)`` writes the entry's files into ``directory`` and returns its meta. Only one
        process builds a given entry at a time; the others wait for the lock and reuse its result.
        """
        while True:
            entry = self.lookup(key)
            built = False
            if entry is None:
                with self._building(key):
                    entry = self.lookup(key)
                    if entry is None:
                        entry = self._write(key, build)
                        built = True
                    else:
                        logger.info("dataset cache entry %s was built by another run meanwhile; reusing it", entry)
            self.mark_in_use(key)
            if (entry / "meta.json").is_file():
                return entry, built
            self.release(key)  # pruned between the check and the lock: look again

    def release(self, key: str) -> None:
        descriptor = _IN_USE.pop(key, None)
        if descriptor is not None:
            os.close(descriptor)

    @contextmanager
    def _building(self, key: str) -> Iterator[None]:
        descriptor = _lock(self.lock_path(key, "build"), exclusive=True, blocking=False)
        if descriptor is None:
            logger.info("another run is building dataset cache entry %s; waiting for it", key)
            descriptor = _lock(self.lock_path(key, "build"), exclusive=True)
        try:
            yield
        finally:
            os.close(descriptor)

    def mark_in_use(self, key: str) -> None:
        """Hold a shared lock on the entry for the rest of this process, and record its last use."""
        if key not in _IN_USE:
            _IN_USE[key] = _lock(self.lock_path(key, "use"), exclusive=False)
        try:
            os.utime(self.lock_path(key, "use"))
        except OSError:
            pass

    def _write(self, key: str, build: Callable[[Path], dict[str, Any]]) -> Path:
        """Build into a temporary folder, record sizes and checksums, then publish by renaming. Called under
        the entry's build lock, so the folders of earlier builds of it are those of builds that died: gone."""
        self.root.mkdir(parents=True, exist_ok=True)
        for leftover in self.root.glob(f".{key}.*.tmp"):
            shutil.rmtree(leftover, ignore_errors=True)
        temporary = self.root / f".{key}.{os.getpid()}.tmp"
        try:
            meta = build(temporary)
            meta = {**meta, "created": time.strftime("%Y-%m-%dT%H:%M:%S"), "files": describe_entry_files(temporary)}
            (temporary / "meta.json").write_text(json.dumps(meta, indent=2, default=str))
            entry = self.entry(key)
            if entry.exists():  # damaged: move it out of the way (a run still mapping it keeps its pages)
                discarded = self.root / f".{key}.{os.getpid()}.damaged"
                os.rename(entry, discarded)
                shutil.rmtree(discarded, ignore_errors=True)
            os.rename(temporary, entry)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
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

    # ----------------------------------------------------------------------------- housekeeping
    def entries(self) -> list[dict[str, Any]]:
        """Every published entry: key, path, size in bytes, last use (epoch seconds), data, in use."""
        found = []
        if not self.root.is_dir():
            return found
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith(".") or not (entry / "meta.json").is_file():
                continue
            try:
                meta = json.loads((entry / "meta.json").read_text())
            except (OSError, ValueError):
                meta = {}
            use = self.lock_path(entry.name, "use")
            last_used = max(use.stat().st_mtime if use.exists() else 0.0, (entry / "meta.json").stat().st_mtime)
            found.append({
                "key": entry.name, "path": entry,
                "size": sum(p.stat().st_size for p in entry.rglob("*") if p.is_file()),
                "last_used": last_used,
                "data": [p for p in (meta.get("train_data_path"), meta.get("validation_data_path")) if p],
                "in_use": self.in_use(entry.name),
            })
        return found

    def in_use(self, key: str) -> bool:
        if key in _IN_USE:
            return True
        descriptor = _lock(self.lock_path(key, "use"), exclusive=True, blocking=False)
        if descriptor is None:
            return True
        os.close(descriptor)
        return False

    def remove(self, key: str) -> bool:
        """Delete an entry unless a run uses or builds it; return whether it was deleted."""
        use = _lock(self.lock_path(key, "use"), exclusive=True, blocking=False)
        if use is None:
            return False
        try:
            build = _lock(self.lock_path(key, "build"), exclusive=True, blocking=False)
            if build is None:
                return False
            try:
                entry = self.entry(key)
                doomed = self.root / f".{key}.{os.getpid()}.pruned"
                os.rename(entry, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
                return True
            finally:
                os.close(build)
        finally:
            os.close(use)

    def remove_leftovers(self) -> list[Path]:
        """Delete folders left by builds that died (``.KEY.PID.tmp`` whose build lock nobody holds)."""
        removed = []
        for leftover in sorted(self.root.glob(".*.tmp")) if self.root.is_dir() else []:
            key = leftover.name[1:].split(".")[0]
            build = _lock(self.lock_path(key, "build"), exclusive=True, blocking=False)
            if build is None:
                continue
            try:
                shutil.rmtree(leftover, ignore_errors=True)
                removed.append(leftover)
            finally:
                os.close(build)
        return removed
