"""Each embedding's vocabulary namespace, taken from the indexer it is paired with.

A reader's ``token_indexers`` and a model's ``token_embedders`` are paired by name, and an ``embedding``
sizes its table by a vocabulary namespace: ``tokens`` unless its config names one. AllenNLP keeps
``tokens`` even for the ``embedding`` inside a ``character_encoding``, whose ``characters`` indexer writes
to ``token_characters``: on real data the word vocabulary is the larger, so the table is only
oversized, but on small data it is too small and the first step fails (``index out of range``).

Here an ``embedding`` under a token embedder that names no ``vocab_namespace`` takes the namespace of
the indexer of the same name, when that indexer writes one to the vocabulary: its size when it states
none, and the size a stated ``num_embeddings`` must hold (see :class:`~distrain.modules.token_embedders.
embedding.Embedding`).
An indexer name that means different namespaces in different fields of the readers decides nothing.
It is a function of the config alone, applied wherever a config is resolved (an archive's too), so a
model is built alike for training and for loading its weights.
"""

from __future__ import annotations

import inspect
from typing import Iterator

from distrain.config.schema import Build, DictOf, ListOf, Node, Value
from distrain.data.token_indexer import TokenIndexer
from distrain.modules.token_embedder import TokenEmbedder
from distrain.modules.token_embedders.embedding import Embedding

_READERS = ("dataset_reader", "validation_dataset_reader")


def link_embedding_namespaces(plan: Build) -> None:
    """Give each unconfigured embedding under a model's token embedders its indexer's namespace."""
    namespaces = indexer_namespaces([plan.arguments.get(key) for key in _READERS])
    model = plan.arguments.get("model")
    if not namespaces or model is None:
        return
    for embedders in _dicts_of(model, TokenEmbedder):
        for name, embedder in embedders.items():
            namespace = namespaces.get(name)
            if namespace is None:
                continue
            for embedding in _nodes(embedder):
                if _is(embedding, Embedding) and "vocab_namespace" not in embedding.arguments:
                    embedding.arguments["vocab_namespace"] = Value(namespace)


def indexer_namespaces(readers: list[Node | None]) -> dict[str, str]:
    """Indexer name → the vocabulary namespace it writes, over every ``{name: indexer}`` of the readers;
    a name that writes different namespaces in different places is left out."""
    found: dict[str, set[str | None]] = {}
    for reader in readers:
        if reader is None:
            continue
        for indexers in _dicts_of(reader, TokenIndexer):
            for name, indexer in indexers.items():
                found.setdefault(name, set()).add(_written_namespace(indexer))
    return {name: namespaces.pop() for name, namespaces in found.items() if len(namespaces) == 1 and None not in namespaces}


def _written_namespace(indexer: Node) -> str | None:
    """The namespace a configured indexer counts its items into; None if it counts none (a pretrained
    tokenizer's ids) or names none."""
    if not isinstance(indexer, Build) or indexer.cls.count_vocab_items is TokenIndexer.count_vocab_items:
        return None
    if "namespace" not in inspect.signature(indexer.cls).parameters:
        return None
    tokenizer = indexer.arguments.get("character_tokenizer")
    if isinstance(tokenizer, Build) and tokenizer.argument("byte_encoding"):
        return None  # byte ids bypass the vocabulary (BiDAF's characters): the stated num_embeddings holds them
    namespace = indexer.argument("namespace")
    return namespace if isinstance(namespace, str) else None


def _dicts_of(root: Node, base: type) -> Iterator[dict[str, Node]]:
    """Every ``{name: component}`` under ``root`` whose components are all ``base``s (e.g. indexers)."""
    for node in _nodes(root):
        if isinstance(node, DictOf) and node.items and all(_is(item, base) for item in node.items.values()):
            yield node.items


def _nodes(root: Node) -> Iterator[Node]:
    yield root
    children = (root.arguments.values() if isinstance(root, Build) else root.items.values()
                if isinstance(root, DictOf) else root.items if isinstance(root, ListOf) else ())
    for child in children:
        yield from _nodes(child)


def _is(node: Node, base: type) -> bool:
    return isinstance(node, Build) and isinstance(node.cls, type) and issubclass(node.cls, base)
