"""AllenNLP's vocabulary directory (``vocabulary: {type: "from_files", directory: ...}``), read as it is.

The format: one ``<namespace>.txt`` per namespace, one token per line in index order (a newline inside a
token written ``@@NEWLINE@@``), and ``non_padded_namespaces.txt`` listing the namespaces (or ``*suffix``
patterns) without padding. A padded namespace's file leaves out the padding token: it is index 0 and the
file's first line is index 1. AllenNLP's ``model.tar.gz`` holds it as ``vocabulary/``. Distrain's own
``vocabulary/`` folder in its archives is another format (JSON-quoted lines); this module reads only AllenNLP's.
"""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from distrain.data.vocabulary import NON_PADDED_FILE, OOV_TOKEN, PADDING_TOKEN, Vocabulary


def _matches(pattern: str, namespace: str) -> bool:
    return namespace.endswith(pattern[1:]) if pattern.startswith("*") else pattern == namespace


def vocabulary_texts(location: str | Path) -> dict[str, str]:
    """``{file name: text}`` of an AllenNLP vocabulary: a directory, or a ``.tar.gz`` or ``.zip`` holding one (a model
    archive's ``vocabulary/`` folder, else the folder with ``non_padded_namespaces.txt``); read in memory, nothing
    is extracted."""
    location = Path(location)
    if location.is_dir():
        return {path.name: path.read_text("utf-8") for path in sorted(location.glob("*.txt"))}
    if zipfile.is_zipfile(location):
        with zipfile.ZipFile(location) as archive:
            names = [name for name in archive.namelist() if name.endswith(".txt")]
            folder = _vocabulary_folder(names)
            return {PurePosixPath(name).name: archive.read(name).decode("utf-8")
                    for name in names if folder is not None and PurePosixPath(name).parent == folder}
    with tarfile.open(location) as archive:
        members = {member.name: member for member in archive.getmembers()
                   if member.isfile() and member.name.endswith(".txt")}
        folder = _vocabulary_folder(list(members))
        return {PurePosixPath(name).name: archive.extractfile(member).read().decode("utf-8")
                for name, member in members.items() if folder is not None and PurePosixPath(name).parent == folder}


def _vocabulary_folder(names: list[str]) -> PurePosixPath | None:
    """The archive folder holding the vocabulary: the shallowest named ``vocabulary``, else the shallowest with
    ``non_padded_namespaces.txt``."""
    folders = sorted({PurePosixPath(name).parent for name in names}, key=lambda folder: len(folder.parts))
    named = next((folder for folder in folders if folder.name == "vocabulary"), None)
    if named is not None:
        return named
    return next((PurePosixPath(name).parent for name in sorted(names, key=lambda name: len(PurePosixPath(name).parts))
                 if PurePosixPath(name).name == NON_PADDED_FILE), None)


def directory_problem(location: str) -> str | None:
    """Why ``location`` holds no AllenNLP vocabulary (None when it holds one)."""
    path = Path(location)
    if not path.exists():
        return f"{location} does not exist"
    try:
        texts = vocabulary_texts(path)
    except (OSError, tarfile.TarError) as error:
        return f"{location} is neither a vocabulary directory nor a readable model archive ({error})"
    if NON_PADDED_FILE not in texts:
        return f"{location} is not an AllenNLP vocabulary (it has no {NON_PADDED_FILE})"
    return None


def read_vocabulary_directory(location: str | Path, oov_token: str = OOV_TOKEN) -> Vocabulary:
    """The vocabulary AllenNLP's ``Vocabulary.from_files`` would load from ``location``."""
    texts = vocabulary_texts(location)
    patterns = [line.strip() for line in texts.pop(NON_PADDED_FILE).splitlines() if line.strip()]
    tokens: dict[str, list[str]] = {}
    for name, text in sorted(texts.items()):
        if name.startswith("."):
            continue
        lines = text.replace("\r\n", "\n").split("\n")
        if lines and lines[-1] == "":
            lines = lines[:-1]
        items = [OOV_TOKEN if line == oov_token else line.replace("@@NEWLINE@@", "\n") for line in lines]
        namespace = name.removesuffix(".txt")
        padded = not any(_matches(pattern, namespace) for pattern in patterns)
        tokens[namespace] = [PADDING_TOKEN] + items if padded else items
    return Vocabulary(tokens)


def fixed_vocabulary(config: Any) -> Vocabulary | None:
    """The vocabulary a ``vocabulary`` block gives outright (``from_files``; ``empty``: none), else None: counted
    from data."""
    if getattr(config, "type", "from_instances") == "empty":
        return Vocabulary()
    if getattr(config, "type", "from_instances") != "from_files":
        return None
    return read_vocabulary_directory(config.directory)


def base_vocabulary(config: Any, archive: str | None = None) -> Vocabulary | None:
    """The vocabulary the data's tokens extend: ``extend``'s directory, or the archive a ``from_archive`` model
    comes from (its tokens keep their indices, so its embeddings stay in place); None: counted from scratch."""
    if getattr(config, "type", "from_instances") == "extend":
        return read_vocabulary_directory(config.directory)
    if archive is not None:
        return archive_vocabulary(archive)
    return None


def archive_vocabulary(archive: str | Path) -> Vocabulary:
    """The vocabulary inside a model archive, AllenNLP's or distrain's (read in memory)."""
    texts = vocabulary_texts(archive)
    if NON_PADDED_FILE in texts:
        return read_vocabulary_directory(archive)
    import json

    return Vocabulary({name.removesuffix(".txt"): [json.loads(line) for line in text.splitlines()]
                       for name, text in texts.items()})


def vocabulary_files(config: Any, archive: str | None = None) -> list[str]:
    """The files a given vocabulary is read from (part of the dataset cache's key)."""
    if archive is not None:
        return [str(archive)]
    if getattr(config, "type", "from_instances") not in ("from_files", "extend"):
        return []
    location = Path(config.directory)
    return sorted(str(path) for path in location.glob("*.txt")) if location.is_dir() else [str(location)]


def write_vocabulary_directory(vocab: Vocabulary, directory: str | Path) -> None:
    """``vocab`` in AllenNLP's directory format, which :func:`read_vocabulary_directory` reads back as it is (and
    AllenNLP's ``Vocabulary.from_files`` too): a padded namespace's file leaves out its padding token."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    non_padded = [namespace for namespace in vocab.namespaces() if not vocab.is_padded_namespace(namespace)]
    (directory / NON_PADDED_FILE).write_text("".join(f"{namespace}\n" for namespace in non_padded), "utf-8")
    for namespace in vocab.namespaces():
        tokens = vocab.tokens(namespace)[0 if namespace in non_padded else 1:]
        (directory / f"{namespace}.txt").write_text("".join(token.replace("\n", "@@NEWLINE@@") + "\n"
                                                            for token in tokens), "utf-8")
