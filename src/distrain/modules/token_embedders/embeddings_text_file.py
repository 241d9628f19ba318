"""A pretrained vectors file opened as text whatever it is packed in (AllenNLP's ``EmbeddingsTextFile``).

Plain, ``.gz``, ``.bz2`` or ``.xz``, or one member of a ``.zip`` / ``.tar(.gz|.bz2|.xz)`` archive, named by AllenNLP's
uri ``(path/to/archive)#path/inside`` (an archive of one file needs no member). Lines are read as they are iterated,
so a vectors file of gigabytes is never held whole; a word2vec-style header line (``count dim``) is skipped and its
count kept as ``num_tokens`` (None without one).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import tarfile
import zipfile
from typing import IO, Any, Iterator

_URI = re.compile(r"^\((.*)\)#(.*)$")
_OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def format_embeddings_file_uri(main_file_path_or_url: str, path_inside_archive: str | None = None) -> str:
    return f"({main_file_path_or_url})#{path_inside_archive}" if path_inside_archive else main_file_path_or_url


def parse_embeddings_file_uri(uri: str) -> tuple[str, str | None]:
    match = _URI.fullmatch(str(uri))
    return (match.group(1), match.group(2)) if match else (str(uri), None)


def _member(path: str, names: list[str], member: str | None) -> str:
    if member is not None:
        if member not in names:
            raise ValueError(f"the archive {path} has no file {member}")
        return member
    if len(names) != 1:
        raise ValueError(f"The archive {path} contains multiple files, so you must select one of the files inside "
                         "providing a uri of the type: (path_or_url_to_archive)#path_inside_archive.")
    return names[0]


def _open(path: str, member: str | None, encoding: str) -> tuple[IO[str], list[Any]]:
    """A text handle on the file (and the archive objects to close with it)."""
    if zipfile.is_zipfile(path):
        archive = zipfile.ZipFile(path)
        names = [name for name in archive.namelist() if not name.endswith("/")]
        return io.TextIOWrapper(archive.open(_member(path, names, member)), encoding=encoding), [archive]
    if tarfile.is_tarfile(path):
        archive = tarfile.open(path)
        names = [info.name for info in archive.getmembers() if info.isfile()]
        return io.TextIOWrapper(archive.extractfile(_member(path, names, member)), encoding=encoding), [archive]
    if member is not None:
        raise ValueError(f"{path} is no archive, so it has no file {member} inside")
    opener = _OPENERS.get(path[path.rfind("."):], open)
    return opener(path, "rt", encoding=encoding), []


def header_count(line: str) -> int | None:
    """A word2vec header's token count (``count dim``, either order, or a lone count), else None."""
    fields = line.split()
    if 1 <= len(fields) <= 2 and all(field.isdigit() for field in fields):
        return max(int(field) for field in fields)
    return None


class EmbeddingsTextFile(Iterator[str]):
    def __init__(self, file_uri: str, encoding: str = "utf-8", cache_dir: str | None = None) -> None:
        path, member = parse_embeddings_file_uri(str(file_uri))
        self._handle, self._archives = _open(path, member, encoding)
        self._first = self._handle.readline()
        self.num_tokens = header_count(self._first) if self._first else None
        self._pending = self._first if self.num_tokens is None and self._first else None

    def read(self) -> str:
        text = (self._pending or "") + self._handle.read()
        self._pending = None
        return self._first + text if self.num_tokens is not None else text

    def readline(self) -> str:
        if self._pending is not None:
            line, self._pending = self._pending, None
            return line
        return self._handle.readline()

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def __iter__(self) -> EmbeddingsTextFile:
        return self

    def __len__(self) -> int:
        if self.num_tokens is None:
            raise AttributeError("the file has no header line with its number of tokens")
        return self.num_tokens

    def close(self) -> None:
        self._handle.close()
        for archive in self._archives:
            archive.close()

    def __enter__(self) -> EmbeddingsTextFile:
        return self

    def __exit__(self, *problem: Any) -> None:
        self.close()
