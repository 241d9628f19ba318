"""``allennlp.common.file_utils``: ``cached_path`` and the file readers built on it, for local files.

distrain runs where there may be no network (and training reads nothing remote), so a URL (``http(s)://``,
``s3://``, ``gs://``, ``hf://``) is refused with one line saying so: download the file and give its path.
Local paths, ``~`` and ``package://PACKAGE/PATH`` (a file inside an installed package) are what is read, and
``archive.tar.gz!member`` with ``extract_archive=True`` extracts a local archive once into the cache folder.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from distrain.errors import BadInput

__all__ = ["CACHE_DIRECTORY", "FileUnavailable", "cached_path", "get_file_extension", "json_lines_from_file",
           "open_compressed", "read_set_from_file", "text_lines_from_file"]

#: where archives named with ``extract_archive`` are extracted (``cache_dir`` chooses another)
CACHE_DIRECTORY = str(Path(os.environ.get("DISTRAIN_CACHE_DIR", Path.home() / ".cache" / "distrain")) / "cached_path")
REMOTE_SCHEMES = ("http://", "https://", "s3://", "gs://", "hf://")


class FileUnavailable(BadInput, FileNotFoundError):
    """A file ``cached_path`` cannot give: missing, or remote. A ``FileNotFoundError``, as AllenNLP raises."""


def cached_path(url_or_filename: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
                extract_archive: bool = False, force_extract: bool = False) -> str:
    """The local path of ``url_or_filename``; with ``extract_archive``, the folder a local ``.tar.gz`` or
    ``.zip`` is extracted to (``ARCHIVE!MEMBER``: that member's path inside it)."""
    from distrain.pretrained import PretrainedNotFound, resolve_package_path

    name = os.fspath(url_or_filename)
    if name.startswith(REMOTE_SCHEMES):
        raise FileUnavailable(f"{name}: remote files are not fetched (distrain runs offline); download it and give "
                              "its local path")
    name, _, member = name.partition("!")
    try:
        path = Path(resolve_package_path(name)).expanduser()
    except PretrainedNotFound as error:
        raise FileUnavailable(f"{name}: {error}") from None
    if not path.exists():
        raise FileUnavailable(f"file {path} not found")
    if member and not extract_archive:
        raise FileUnavailable(f"{url_or_filename}: a path inside an archive needs extract_archive=True")
    if extract_archive and (tarfile.is_tarfile(path) or zipfile.is_zipfile(path)):
        path = _extracted(path, Path(cache_dir or CACHE_DIRECTORY), force_extract)
    if member:
        path = path / member
        if not path.exists():
            raise FileUnavailable(f"{url_or_filename}: the archive holds no {member}")
    return str(path)


def _extracted(archive: Path, cache_dir: Path, force: bool) -> Path:
    """The folder ``archive`` is extracted to, keyed by its path, size and time (extracted once)."""
    stat = archive.stat()
    key = hashlib.sha256(f"{archive.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    folder = cache_dir / f"{archive.name}-{key}-extracted"
    if folder.is_dir() and not force:
        return folder
    cache_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=cache_dir, prefix=".extracting-"))
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as opened:
            opened.extractall(staging)
    else:
        from distrain.experiment.archive.format import extract_archive as extract_safely

        extract_safely(archive, staging)
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(staging, folder)
    return folder


def get_file_extension(path: str, dot: bool = True, lower: bool = True) -> str:
    extension = os.path.splitext(path)[1]
    extension = extension if dot else extension[1:]
    return extension.lower() if lower else extension


def open_compressed(filename: str | os.PathLike, mode: str = "rt", encoding: str | None = "UTF-8", **kwargs: Any):
    """Open a local file, through gzip, bz2 or lzma when its name ends ``.gz``, ``.bz2`` or ``.xz``."""
    name = os.fspath(filename)
    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(get_file_extension(name), open)
    return opener(cached_path(name), mode=mode, encoding=encoding, **kwargs)


def text_lines_from_file(filename: str | os.PathLike, strip_lines: bool = True) -> Iterator[str]:
    with open_compressed(filename, "rt", encoding="UTF-8", errors="replace") as lines:
        for line in lines:
            yield line.strip() if strip_lines else line


def json_lines_from_file(filename: str | os.PathLike) -> Iterable[Any]:
    return (json.loads(line) for line in text_lines_from_file(filename))


def read_set_from_file(filename: str) -> set[str]:
    """The lines of ``filename`` (trailing whitespace removed), each once."""
    with open(cached_path(filename), encoding="utf-8") as lines:
        return {line.rstrip() for line in lines}
