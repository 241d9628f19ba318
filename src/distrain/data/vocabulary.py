"""Vocabulary: string ↔ index per namespace, built from the training data and saved with the model."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping

from distrain.config.constraints import NonNegativeInt, PositiveInt
from distrain.config.errors import Problem

PADDING_TOKEN = "@@PADDING@@"
OOV_TOKEN = "@@UNKNOWN@@"
#: AllenNLP's list of the namespaces without padding, in its vocabulary directories
NON_PADDED_FILE = "non_padded_namespaces.txt"


@dataclass
class VocabularyConfig:
    """The ``vocabulary`` block: how the vocabulary is built from the training instances.

    ``min_count`` and ``max_size`` are either one number for every token namespace or a mapping
    namespace → number. Namespaces ending in ``labels`` or ``tags`` never get padding/OOV entries
    and are never trimmed.
    """

    min_count: NonNegativeInt | dict[str, NonNegativeInt] = 1
    max_size: PositiveInt | dict[str, PositiveInt] | None = None
    #: ``from_files``: AllenNLP's vocabulary directory (or a model archive holding ``vocabulary/``) at
    #: ``directory``, used as it is (nothing counted; see :mod:`distrain.data.vocabulary_files`); ``empty``:
    #: AllenNLP's vocabulary for models that need none (a transformer's own ids), nothing counted
    type: Literal["from_instances", "from_files", "empty"] = "from_instances"
    directory: str | None = None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        if arguments["type"] != "from_files":
            return [Problem("directory", "is read only with type from_files")] if arguments["directory"] else []
        if arguments["directory"] is None:
            return [Problem("directory", "missing: from_files needs the vocabulary directory")]
        return []  # what the directory holds is checked with the experiment (distrain.data.vocabulary_files)


def is_padded(namespace: str) -> bool:
    return not namespace.endswith(("labels", "tags"))


class Vocabulary:
    def __init__(self, tokens: dict[str, list[str]] | None = None) -> None:
        self._tokens: dict[str, list[str]] = {}
        self._indices: dict[str, dict[str, int]] = {}
        for namespace, items in (tokens or {}).items():
            self._set(namespace, items)

    def _set(self, namespace: str, items: list[str]) -> None:
        self._tokens[namespace] = list(items)
        self._indices[namespace] = {token: index for index, token in enumerate(items)}

    @classmethod
    def from_counters(cls, counters: dict[str, Counter], config: VocabularyConfig | None = None) -> Vocabulary:
        config = config or VocabularyConfig()
        tokens: dict[str, list[str]] = {}
        for namespace, counter in counters.items():
            if not is_padded(namespace):
                tokens[namespace] = sorted(counter, key=lambda item: (-counter[item], item))
                continue
            min_count = _for_namespace(config.min_count, namespace, 1)
            max_size = _for_namespace(config.max_size, namespace, None)
            kept = sorted((t for t, c in counter.items() if c >= min_count), key=lambda t: (-counter[t], t))
            if max_size is not None:
                kept = kept[: max(0, max_size - 2)]
            tokens[namespace] = [PADDING_TOKEN, OOV_TOKEN] + kept
        return cls(tokens)

    @classmethod
    def from_instances(cls, instances: Iterable[dict], config: VocabularyConfig | None = None) -> Vocabulary:
        counters: dict[str, Counter] = {}
        for instance in instances:
            for field in instance.values():
                field.count_vocab_items(counters)
        return cls.from_counters(counters, config)

    # ------------------------------------------------------------------------------ lookups
    def namespaces(self) -> list[str]:
        return sorted(self._tokens)

    def size(self, namespace: str = "tokens") -> int:
        return len(self._tokens.get(namespace, ()))

    def token_indices(self, tokens: list[str], namespace: str = "tokens") -> list[int]:
        indices = self._indices.get(namespace)
        if indices is None:
            raise KeyError(f'vocabulary has no namespace "{namespace}"')
        oov = indices.get(OOV_TOKEN, 1)
        return [indices.get(token, oov) for token in tokens]

    def label_index(self, label: str, namespace: str = "labels") -> int:
        try:
            return self._indices[namespace][label]
        except KeyError:
            raise KeyError(f'label "{label}" is not in vocabulary namespace "{namespace}"') from None

    def token(self, index: int, namespace: str = "tokens") -> str:
        return self._tokens[namespace][index]

    def tokens(self, namespace: str) -> list[str]:
        return list(self._tokens[namespace])

    # ----------------------------------------------------------- AllenNLP's names for the lookups
    def get_vocab_size(self, namespace: str = "tokens") -> int:
        return self.size(namespace)

    def get_token_index(self, token: str, namespace: str = "tokens") -> int:
        """The token's index; an unknown token is the OOV entry where the namespace has one."""
        indices = self._indices.get(namespace, {})
        if token in indices or OOV_TOKEN not in indices:
            return self.label_index(token, namespace)
        return indices[OOV_TOKEN]

    def get_token_from_index(self, index: int, namespace: str = "tokens") -> str:
        return self.token(index, namespace)

    def get_index_to_token_vocabulary(self, namespace: str = "tokens") -> dict[int, str]:
        return dict(enumerate(self._tokens.get(namespace, ())))

    def get_token_to_index_vocabulary(self, namespace: str = "tokens") -> dict[str, int]:
        return dict(self._indices.get(namespace, {}))

    def get_namespaces(self) -> set[str]:
        return set(self._tokens)

    # ----------------------------------------------------------------------- persistence
    def save(self, directory: str | Path) -> None:
        """One ``NAMESPACE.txt`` per namespace, one token per line, in index order."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for namespace, items in self._tokens.items():
            (directory / f"{namespace}.txt").write_text("".join(f"{json.dumps(t)}\n" for t in items), "utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> Vocabulary:
        directory = Path(directory)
        tokens = {}
        for path in sorted(directory.glob("*.txt")):
            tokens[path.stem] = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        return cls(tokens)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and self._tokens == other._tokens

    def __repr__(self) -> str:
        sizes = ", ".join(f"{ns}: {len(items)}" for ns, items in sorted(self._tokens.items()))
        return f"Vocabulary({sizes})"


def _for_namespace(setting, namespace: str, default):
    if isinstance(setting, dict):
        return setting.get(namespace, default)
    return default if setting is None else setting
