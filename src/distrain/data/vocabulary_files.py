"""AllenNLP's vocabulary directory (``vocabulary: {type: "from_files", directory: ...}``), read as it is.

The format: one ``<namespace>.txt`` per namespace, one token per line in index order (a newline inside a
token written ``@@NEWLINE@@``), and ``non_padded_namespaces.txt`` listing the namespaces (or ``*suffix``
patterns) without padding. A padded namespace's file leaves out the padding token: it is index 0 and the
file's first line is index 1. Distrain's own ``vocabulary/`` folder in an archive is another format
(JSON-quoted lines); this module reads only AllenNLP's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from distrain.data.vocabulary import NON_PADDED_FILE, OOV_TOKEN, PADDING_TOKEN, Vocabulary


def _matches(pattern: str, namespace: str) -> bool:
    return namespace.endswith(pattern[1:]) if pattern.startswith("*") else pattern == namespace


def read_vocabulary_directory(directory: str | Path, oov_token: str = OOV_TOKEN) -> Vocabulary:
    """The vocabulary AllenNLP's ``Vocabulary.from_files`` would load from ``directory``."""
    directory = Path(directory)
    patterns = [line.strip() for line in (directory / NON_PADDED_FILE).read_text("utf-8").splitlines() if line.strip()]
    tokens: dict[str, list[str]] = {}
    for path in sorted(directory.glob("*.txt")):
        if path.name == NON_PADDED_FILE or path.name.startswith("."):
            continue
        lines = path.read_text("utf-8").replace("\r\n", "\n").split("\n")
        if lines and lines[-1] == "":
            lines = lines[:-1]
        items = [OOV_TOKEN if line == oov_token else line.replace("@@NEWLINE@@", "\n") for line in lines]
        padded = not any(_matches(pattern, path.stem) for pattern in patterns)
        tokens[path.stem] = [PADDING_TOKEN] + items if padded else items
    return Vocabulary(tokens)


def fixed_vocabulary(config: Any) -> Vocabulary | None:
    """The vocabulary a ``vocabulary`` block gives outright (``from_files``), else None: counted from data."""
    if getattr(config, "type", "from_instances") != "from_files":
        return None
    return read_vocabulary_directory(config.directory)


def vocabulary_files(config: Any) -> list[str]:
    """The files a given vocabulary is read from (part of the dataset cache's key)."""
    if getattr(config, "type", "from_instances") != "from_files":
        return []
    return sorted(str(path) for path in Path(config.directory).glob("*.txt"))
