"""``allennlp.data.vocabulary``: distrain's vocabulary under AllenNLP's constructor and methods.

distrain builds its vocabulary from a config block (:class:`~distrain.data.vocabulary.VocabularyConfig`), once, in
the parent. AllenNLP's code builds one by hand: ``Vocabulary(counter=..., min_count=..., ...)``,
``from_instances(instances, **rules)``, ``extend_from_instances``, ``set_from_file``, ``save_to_files`` /
``from_files``, custom padding and OOV tokens. A namespace springs into being when first read, with padding and OOV
entries unless ``non_padded_namespaces`` matches it (AllenNLP's defaultdicts); the object is still distrain's
vocabulary, so it serves distrain's models and indexers as it is.
"""

from __future__ import annotations

import codecs
import inspect
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

from distrain.allennlp.modules.token_embedders.embedding import read_embedding_tokens as _read_pretrained_tokens
from distrain.config.errors import ConfigError
from distrain.data.vocabulary import NON_PADDED_FILE, OOV_TOKEN as DEFAULT_OOV_TOKEN
from distrain.data.vocabulary import PADDING_TOKEN as DEFAULT_PADDING_TOKEN
from distrain.data.vocabulary import Vocabulary as DistrainVocabulary
from distrain.data.vocabulary import UnknownLabel, is_padded as _matches_none

__all__ = ["DEFAULT_NON_PADDED_NAMESPACES", "DEFAULT_OOV_TOKEN", "DEFAULT_PADDING_TOKEN", "Vocabulary",
           "_NamespaceDependentDefaultDict", "_read_pretrained_tokens"]

DEFAULT_NON_PADDED_NAMESPACES = ("*tags", "*labels")
#: how AllenNLP's vocabulary files write a newline inside a token
NEWLINE = "@@NEWLINE@@"


#: vocabulary types users registered with :meth:`Vocabulary.register` (name -> constructor)
_registered: dict[str, Callable[..., Any]] = {}


def _counted(instances: Iterable[Any]) -> dict[str, dict[str, int]]:
    counter: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for instance in instances:
        for field in instance.values():
            field.count_vocab_items(counter)
    return counter


def _check_oov(tokens: list[str], padded: bool, oov_token: str, where: Any) -> None:
    """AllenNLP's assertion: a padded namespace read from a file holds the OOV token."""
    if padded and oov_token not in tokens:
        raise AssertionError(f"OOV token not found! {where} has no {oov_token!r} (give the oov_token it was saved with)")


class _NamespaceDependentDefaultDict(defaultdict):
    """A dict whose missing namespace gets ``padded_function()``, or ``non_padded_function()`` where one of
    ``non_padded_namespaces`` (a name or ``*suffix``) matches it."""

    def __init__(self, non_padded_namespaces: Iterable[str], padded_function: Callable[[], Any],
                 non_padded_function: Callable[[], Any]) -> None:
        super().__init__()
        self._non_padded_namespaces = set(non_padded_namespaces)
        self._padded_function = padded_function
        self._non_padded_function = non_padded_function

    def __missing__(self, key: str) -> Any:
        padded = _matches_none(key, self._non_padded_namespaces)
        value = self._padded_function() if padded else self._non_padded_function()
        dict.__setitem__(self, key, value)
        return value

    def add_non_padded_namespaces(self, non_padded_namespaces: Iterable[str]) -> None:
        self._non_padded_namespaces.update(non_padded_namespaces)


class Vocabulary(DistrainVocabulary):
    def __init__(self, counter: dict[str, dict[str, int]] | None = None, min_count: dict[str, int] | None = None,
                 max_vocab_size: int | dict[str, int] | None = None,
                 non_padded_namespaces: Iterable[str] = DEFAULT_NON_PADDED_NAMESPACES,
                 pretrained_files: dict[str, str] | None = None, only_include_pretrained_words: bool = False,
                 tokens_to_add: dict[str, list[str]] | None = None,
                 min_pretrained_embeddings: dict[str, int] | None = None,
                 padding_token: str | None = DEFAULT_PADDING_TOKEN, oov_token: str | None = DEFAULT_OOV_TOKEN) -> None:
        self._padding_token = padding_token if padding_token is not None else DEFAULT_PADDING_TOKEN
        self._oov_token = oov_token if oov_token is not None else DEFAULT_OOV_TOKEN
        self._non_padded_namespaces = set(non_padded_namespaces)
        self._retained_counter: dict | None = None
        if counter and all(isinstance(items, (list, tuple)) for items in counter.values()):
            super().__init__(counter)  # distrain's form: namespace -> its tokens in index order
            return
        super().__init__()
        self._extend(counter, min_count, max_vocab_size, non_padded_namespaces, pretrained_files,
                     only_include_pretrained_words, tokens_to_add, min_pretrained_embeddings)

    # ------------------------------------------------------------------ namespaces as AllenNLP's defaultdicts
    def _namespace(self, namespace: str) -> dict[str, int]:
        if namespace not in self._indices:
            padded = _matches_none(namespace, self._non_padded_namespaces)
            self._set(namespace, [self._padding_token, self._oov_token] if padded else [])
        return self._indices[namespace]

    @property
    def _token_to_index(self) -> dict[str, dict[str, int]]:
        return {namespace: dict(indices) for namespace, indices in self._indices.items()}

    @property
    def _index_to_token(self) -> dict[str, dict[int, str]]:
        return {namespace: dict(enumerate(tokens)) for namespace, tokens in self._tokens.items()}

    def is_padded(self, namespace: str) -> bool:
        return self._tokens.get(namespace, [None])[:1] == [self._padding_token]

    def is_padded_namespace(self, namespace: str) -> bool:
        return self.is_padded(namespace)

    def add_token_to_namespace(self, token: str, namespace: str = "tokens") -> int:
        if not isinstance(token, str):
            raise ValueError(f"Vocabulary tokens must be strings, or saving and loading will break. Got "
                             f"{token!r} (type {type(token).__name__})")
        indices = self._namespace(namespace)
        if token not in indices:
            indices[token] = len(self._tokens[namespace])
            self._tokens[namespace].append(token)
        return indices[token]

    def get_token_index(self, token: str, namespace: str = "tokens") -> int:
        indices = self._namespace(namespace)
        if token in indices:
            return indices[token]
        if self._oov_token in indices:
            return indices[self._oov_token]
        raise KeyError(
            f"'{token}' not found in vocab namespace '{namespace}', and namespace does not contain the default OOV "
            f"token ('{self._oov_token}')")

    def label_index(self, label: str, namespace: str = "labels") -> int:
        indices = self._namespace(namespace)
        if label in indices:
            return indices[label]
        raise UnknownLabel(label, namespace)

    def token_indices(self, tokens: list[str], namespace: str = "tokens") -> list[int]:
        return [self.get_token_index(token, namespace) for token in tokens]

    def get_token_from_index(self, index: int, namespace: str = "tokens") -> str:
        self._namespace(namespace)
        return self._tokens[namespace][index]

    def get_vocab_size(self, namespace: str = "tokens") -> int:
        return len(self._namespace(namespace))

    def get_index_to_token_vocabulary(self, namespace: str = "tokens") -> dict[int, str]:
        self._namespace(namespace)
        return dict(enumerate(self._tokens[namespace]))

    def get_token_to_index_vocabulary(self, namespace: str = "tokens") -> dict[str, int]:
        return dict(self._namespace(namespace))

    # ------------------------------------------------------------------------------------ building
    @classmethod
    def from_instances(cls, instances: Iterable[Any], *args: Any, **rules: Any) -> Vocabulary:
        if args:  # distrain's form: from_instances(instances, config)
            return super().from_instances(instances, *args)
        return cls(counter=_counted(instances), **rules)

    @classmethod
    def empty(cls) -> Vocabulary:
        return cls()

    def extend_from_instances(self, instances: Iterable[Any]) -> None:
        self._extend(_counted(instances))

    def extend_from_vocab(self, vocab: DistrainVocabulary) -> None:
        """Add ``vocab``'s namespaces and tokens that this one lacks (its non-padded namespaces too)."""
        self._non_padded_namespaces.update(getattr(vocab, "_non_padded_namespaces", ()))
        for namespace in vocab.get_namespaces():
            self._namespace(namespace)
            for token in vocab.get_token_to_index_vocabulary(namespace):
                self.add_token_to_namespace(token, namespace)

    def _extend(self, counter: dict | None = None, min_count: dict[str, int] | None = None,
                max_vocab_size: int | dict[str, int] | None = None,
                non_padded_namespaces: Iterable[str] = DEFAULT_NON_PADDED_NAMESPACES,
                pretrained_files: dict[str, str] | None = None, only_include_pretrained_words: bool = False,
                tokens_to_add: dict[str, list[str]] | None = None,
                min_pretrained_embeddings: dict[str, int] | None = None) -> None:
        """Add ``counter``'s tokens under AllenNLP's rules; indices already given stay."""
        counter, min_count = counter or {}, min_count or {}
        tokens_to_add = {namespace: list(tokens) for namespace, tokens in (tokens_to_add or {}).items()}
        for namespace in min_count:
            if namespace not in counter:
                raise ConfigError(f"The key '{namespace}' is present in min_count but not in counter")
        non_padded = set(non_padded_namespaces)
        for namespace in set(self._indices) & (set(counter) | set(tokens_to_add)):
            if _matches_none(namespace, self._non_padded_namespaces) != _matches_none(namespace, non_padded):
                raise ConfigError(f"Common namespace {namespace} has conflicting setting of padded = True/False. "
                                  "Hence extension cannot be done.")
        self._non_padded_namespaces.update(non_padded)
        self._retained_counter = {namespace: dict(counts) for namespace, counts in counter.items()}
        for namespace, counts in counter.items():
            pretrained = None
            if namespace in (pretrained_files or {}):
                listed = _read_pretrained_tokens(pretrained_files[namespace])
                wanted = (min_pretrained_embeddings or {}).get(namespace, 0)
                if wanted:
                    tokens_to_add[namespace] = tokens_to_add.get(namespace, []) + \
                        (listed if wanted == -1 else listed[:wanted])
                pretrained = set(listed)
            ranked = sorted(counts.items(), key=lambda item: -item[1])
            limit = max_vocab_size.get(namespace) if isinstance(max_vocab_size, dict) else max_vocab_size
            ranked = ranked[:limit] if limit else ranked
            least = min_count.get(namespace, 1)
            for token, count in ranked:
                if pretrained is None or only_include_pretrained_words:
                    keep = count >= least and (pretrained is None or token in pretrained)
                else:
                    keep = count >= least or token in pretrained
                if keep:
                    self.add_token_to_namespace(token, namespace)
        for namespace, tokens in tokens_to_add.items():
            for token in tokens:
                self.add_token_to_namespace(token, namespace)

    # ---------------------------------------------------------------------------------- files
    def set_from_file(self, filename: str | Path, is_padded: bool = True, oov_token: str = DEFAULT_OOV_TOKEN,
                      namespace: str = "tokens") -> None:
        """The namespace read from one token a line (index order; a padded one's index 0 is left out)."""
        tokens = [self._padding_token] if is_padded else []
        with codecs.open(str(filename), "r", "utf-8") as lines:
            for line in lines.read().split("\n"):
                if not line:
                    continue
                token = line.replace(NEWLINE, "\n")
                tokens.append(self._oov_token if token == oov_token else token)
        _check_oov(tokens, is_padded, self._oov_token, filename)
        self._set(namespace, tokens)

    def save_to_files(self, directory: str | Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / NON_PADDED_FILE).write_text("".join(f"{name}\n" for name in sorted(self._non_padded_namespaces)),
                                                 "utf-8")
        for namespace, tokens in self._tokens.items():
            kept = tokens[1:] if self.is_padded(namespace) else tokens
            (directory / f"{namespace}.txt").write_text("".join(f"{token.replace(chr(10), NEWLINE)}\n"
                                                                for token in kept), "utf-8")

    @classmethod
    def from_files(cls, directory: str | Path, padding_token: str | None = DEFAULT_PADDING_TOKEN,
                   oov_token: str | None = DEFAULT_OOV_TOKEN) -> Vocabulary:
        from distrain.data.vocabulary_files import vocabulary_texts

        texts = vocabulary_texts(directory)
        non_padded = [line for line in texts.pop(NON_PADDED_FILE, "").split("\n") if line]
        vocab = cls(non_padded_namespaces=non_padded, padding_token=padding_token, oov_token=oov_token)
        for filename, text in texts.items():
            namespace = filename[:-len(".txt")] if filename.endswith(".txt") else filename
            padded = _matches_none(namespace, non_padded)
            tokens = [vocab._padding_token] if padded else []
            tokens += [vocab._oov_token if token == (oov_token or DEFAULT_OOV_TOKEN) else token.replace(NEWLINE, "\n")
                       for token in text.split("\n") if token]
            _check_oov(tokens, padded, vocab._oov_token, f"{directory}: {filename}")
            vocab._set(namespace, tokens)
        return vocab

    @classmethod
    def from_files_and_instances(cls, instances: Iterable[Any], directory: str | Path, **rules: Any) -> Vocabulary:
        vocab = cls.from_files(directory, rules.get("padding_token", DEFAULT_PADDING_TOKEN),
                               rules.get("oov_token", DEFAULT_OOV_TOKEN))
        vocab.extend_from_instances(instances)
        return vocab

    @classmethod
    def from_params(cls, params: Any = None, instances: Iterable[Any] | None = None, **extras: Any) -> Vocabulary:
        """AllenNLP's vocabulary block: ``type`` ``from_instances`` (the default: the rules counted over
        ``instances``), ``from_files`` (``directory``, padding and OOV tokens only), ``extend`` (that directory, then
        the instances' tokens under the rules) or ``empty``."""
        block = dict(params.as_dict() if hasattr(params, "as_dict") else params or {})
        kind = block.pop("type", None) or "from_instances"
        if "directory_path" in block:
            block["directory"] = block.pop("directory_path")
        directory = block.pop("directory", None)
        tokens = {key: block.pop(key) for key in ("padding_token", "oov_token") if key in block}
        if kind == "empty":
            return cls(**tokens)
        if kind in ("from_files", "extend") and directory is None:
            raise ConfigError(f"vocabulary: type {kind} needs the directory to read")
        if kind == "from_files":
            if block:
                raise ConfigError(f"vocabulary: from_files takes only directory, padding_token and oov_token; also "
                                  f"given: {', '.join(sorted(block))}")
            return cls.from_files(directory, **tokens)
        if instances is None:
            raise ConfigError(f"vocabulary: type {kind} needs instances to count")
        if kind == "extend":
            vocab = cls.from_files(directory, **tokens)
            vocab._extend(_counted(instances), **block)
            return vocab
        if kind != "from_instances":
            registered = _registered.get(kind)
            if registered is None:
                raise ConfigError(f"vocabulary: unknown type {kind!r}; one of from_instances, from_files, extend, "
                                  f"empty{''.join(', ' + name for name in sorted(_registered))}")
            offered = {"instances": instances, **block, **tokens}
            accepted = inspect.signature(registered).parameters
            takes_all = any(parameter.kind == parameter.VAR_KEYWORD for parameter in accepted.values())
            return registered(**{key: value for key, value in offered.items() if takes_all or key in accepted})
        return cls(counter=_counted(instances), **block, **tokens)

    @classmethod
    def register(cls, name: str, constructor: str | None = None, exist_ok: bool = False) -> Callable[[type], type]:
        """AllenNLP's ``Vocabulary.register``: a subclass (built by ``constructor``, a classmethod taking the block's
        keys and ``instances``) that a block's ``type`` names."""
        def add(subclass: type) -> type:
            if name in _registered and not exist_ok:
                raise ConfigError(f"vocabulary type {name!r} is already registered")
            _registered[name] = getattr(subclass, constructor) if constructor else subclass
            return subclass
        return add

    # ------------------------------------------------------------------------------ the object
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DistrainVocabulary):
            return NotImplemented
        return self._tokens == other._tokens and \
            getattr(other, "_non_padded_namespaces", self._non_padded_namespaces) == self._non_padded_namespaces

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        sizes = "".join(f"\tNamespace: {namespace}, Size: {len(tokens)} \n"
                        for namespace, tokens in self._tokens.items())
        return f"Vocabulary with namespaces:\n{sizes}"

    def print_statistics(self) -> None:
        print(self)
