"""Vocabulary: string ↔ index per namespace, built from the data (AllenNLP's rules) and saved with the model."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
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
    """The ``vocabulary`` block, with AllenNLP's keys and meaning: how the vocabulary is built from the instances
    of the splits ``datasets_for_vocab_creation`` names (every split read, by default).

    ``min_count``, ``max_vocab_size`` (AllenNLP's: tokens kept besides padding and OOV) and ``max_size``
    (distrain's: the namespace's whole size) are one number for every padded namespace or a mapping namespace →
    number. The namespaces matching ``non_padded_namespaces`` (a name, or ``*suffix``) get no padding/OOV entries
    and are never trimmed. ``tokens_to_add`` adds tokens whatever their count; a namespace in ``pretrained_files``
    also keeps tokens below ``min_count`` that the file has, and with ``only_include_pretrained_words`` only those.
    """

    min_count: NonNegativeInt | dict[str, NonNegativeInt] = 1
    max_size: PositiveInt | dict[str, PositiveInt] | None = None
    max_vocab_size: NonNegativeInt | dict[str, NonNegativeInt] | None = None
    non_padded_namespaces: list[str] = field(default_factory=lambda: ["*tags", "*labels"])
    tokens_to_add: dict[str, list[str]] | None = None
    pretrained_files: dict[str, str] | None = None
    only_include_pretrained_words: bool = False
    #: ``from_files``: AllenNLP's vocabulary directory (or a model archive holding ``vocabulary/``) at
    #: ``directory``, used as it is (nothing counted; see :mod:`distrain.data.vocabulary_files`); ``extend``: that
    #: vocabulary, extended by the data's tokens (new ones get the next indices); ``empty``: AllenNLP's
    #: vocabulary for models that need none (a transformer's own ids), nothing counted
    type: Literal["from_instances", "from_files", "extend", "empty"] = "from_instances"
    directory: str | None = None

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        reads_files = arguments["type"] in ("from_files", "extend")
        if not reads_files:
            return [Problem("directory", "is read only with type from_files or extend")] if arguments["directory"] else []
        if arguments["directory"] is None:
            return [Problem("directory", f"missing: {arguments['type']} needs the vocabulary directory")]
        return []  # what the directory holds is checked with the experiment (distrain.data.vocabulary_files)

    def is_padded(self, namespace: str) -> bool:
        return is_padded(namespace, self.non_padded_namespaces)


def is_padded(namespace: str, non_padded: Iterable[str] = ("*tags", "*labels")) -> bool:
    """Whether ``namespace`` has padding and OOV entries: it matches none of ``non_padded`` (names or ``*suffix``)."""
    return not any(namespace.endswith(pattern[1:]) if pattern.startswith("*") else namespace == pattern
                   for pattern in non_padded)


class UnknownLabel(KeyError):
    """A label the vocabulary's (non-padded) namespace lacks: no OOV entry can stand for it."""

    def __init__(self, label: str, namespace: str) -> None:
        super().__init__(f'label "{label}" is not in the vocabulary\'s "{namespace}" namespace (it has no OOV entry: '
                         f'labels come from the splits the vocabulary counts, or from its files)')
        self.label, self.namespace = label, namespace

    def __str__(self) -> str:
        return self.args[0]


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
    def from_counters(cls, counters: dict[str, Counter], config: VocabularyConfig | None = None,
                      base: Vocabulary | None = None) -> Vocabulary:
        """The vocabulary of ``counters`` under ``config``'s rules; with ``base``, that vocabulary extended: its
        tokens keep their indices and the counted ones it lacks follow them."""
        config = config or VocabularyConfig()
        tokens: dict[str, list[str]] = {namespace: base.tokens(namespace) for namespace in
                                        (base.namespaces() if base is not None else [])}
        added = config.tokens_to_add or {}
        for namespace in sorted(set(counters) | set(added)):
            counter = counters.get(namespace, Counter())
            padded = config.is_padded(namespace)
            known = tokens.setdefault(namespace, [PADDING_TOKEN, OOV_TOKEN] if padded else [])
            present = set(known)
            for token in _kept(namespace, counter, config) + list(added.get(namespace, ())):
                if token not in present:
                    known.append(token)
                    present.add(token)
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
        """Each token's index; one the namespace lacks is its OOV entry (a namespace no data filled holds only
        padding and OOV, as AllenNLP's)."""
        indices = self._indices.get(namespace)
        if indices is None:
            return [1] * len(tokens)  # OOV of an empty padded namespace
        oov = indices.get(OOV_TOKEN, 1)
        return [indices.get(token, oov) for token in tokens]

    def label_index(self, label: str, namespace: str = "labels") -> int:
        """The label's index; one the namespace lacks is its OOV entry where the namespace has one (a padded
        namespace such as AllenNLP's ``pos``, as AllenNLP indexes it), else an :class:`UnknownLabel`."""
        indices = self._indices.get(namespace, {})
        found = indices.get(label, indices.get(OOV_TOKEN))
        if found is None:
            raise UnknownLabel(label, namespace)
        return found

    def token(self, index: int, namespace: str = "tokens") -> str:
        return self._tokens[namespace][index]

    def tokens(self, namespace: str) -> list[str]:
        return list(self._tokens[namespace])

    def extended_with(self, other: Vocabulary) -> Vocabulary:
        """This vocabulary, then the tokens of ``other`` it lacks, in ``other``'s order (AllenNLP's
        ``extend_from_vocab``): every index of this one stays."""
        tokens = {namespace: self.tokens(namespace) for namespace in self.namespaces()}
        for namespace in other.namespaces():
            known = tokens.setdefault(namespace, [])
            present = set(known)
            known += [token for token in other.tokens(namespace) if token not in present]
        return Vocabulary(tokens)

    def is_padded_namespace(self, namespace: str) -> bool:
        """Whether the namespace has padding and OOV entries (index 0 and 1)."""
        return self._tokens.get(namespace, [PADDING_TOKEN])[:1] == [PADDING_TOKEN]

    # ----------------------------------------------------------- AllenNLP's names for the lookups
    def get_vocab_size(self, namespace: str = "tokens") -> int:
        return self.size(namespace)

    def get_token_index(self, token: str, namespace: str = "tokens") -> int:
        """The token's index; an unknown token is the OOV entry where the namespace has one, or would have one
        (a padded namespace nothing filled yet, as AllenNLP's)."""
        if namespace not in self._indices and VocabularyConfig().is_padded(namespace):
            return 1
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

    # -------------------------------------------------------- AllenNLP's way of growing one by hand
    def add_token_to_namespace(self, token: str, namespace: str = "tokens") -> int:
        """Add ``token`` (if new) and return its index; a new namespace starts with padding and OOV unless its name
        is one of AllenNLP's non-padded ones (``*tags``, ``*labels``)."""
        if not isinstance(token, str):
            raise ValueError(f"vocabulary tokens are strings, not {type(token).__name__} ({token!r})")
        if namespace not in self._tokens:
            self._set(namespace, [PADDING_TOKEN, OOV_TOKEN] if VocabularyConfig().is_padded(namespace) else [])
        indices = self._indices[namespace]
        if token not in indices:
            indices[token] = len(self._tokens[namespace])
            self._tokens[namespace].append(token)
        return indices[token]

    def add_tokens_to_namespace(self, tokens: list[str], namespace: str = "tokens") -> list[int]:
        return [self.add_token_to_namespace(token, namespace) for token in tokens]

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


def _kept(namespace: str, counter: Counter, config: VocabularyConfig) -> list[str]:
    """The counted tokens a namespace keeps, most frequent first, ties in the order they were first counted
    (AllenNLP's stable sort by count: an AllenNLP config builds AllenNLP's indices; read by several processes,
    the order their shares are merged in)."""
    ranked = sorted(counter, key=lambda item: -counter[item])
    if not config.is_padded(namespace):
        return ranked
    min_count = _for_namespace(config.min_count, namespace, 1)
    pretrained = _pretrained_words(config, namespace)
    if pretrained is not None and config.only_include_pretrained_words:
        kept = [token for token in ranked if token in pretrained and counter[token] >= min_count]
    elif pretrained is not None:
        kept = [token for token in ranked if counter[token] >= min_count or token in pretrained]
    else:
        kept = [token for token in ranked if counter[token] >= min_count]
    limit = _for_namespace(config.max_vocab_size, namespace, None)
    whole = _for_namespace(config.max_size, namespace, None)
    if whole is not None:
        limit = max(0, whole - 2) if limit is None else min(limit, max(0, whole - 2))
    return kept if limit is None else kept[:limit]


def _pretrained_words(config: VocabularyConfig, namespace: str) -> set[str] | None:
    path = (config.pretrained_files or {}).get(namespace)
    if path is None:
        return None
    from distrain.modules.token_embedders.embedding import embedding_file_words

    return embedding_file_words(path)


def _for_namespace(setting, namespace: str, default):
    if isinstance(setting, dict):
        return setting.get(namespace, default)
    return default if setting is None else setting
