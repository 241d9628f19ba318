"""Penn Treebank constituency trees (AllenNLP's ``ptb_trees``, its ``PennTreeBankConstituencySpanDatasetReader``),
for a span-labelling parser: every span of the sentence, each labelled with the constituent it is in the gold tree
or ``NO-LABEL``.

As AllenNLP's: function tags are stripped from phrase labels (``NP-SBJ=2`` is ``NP``; POS tags are kept whole), a
``VROOT`` or ``TOP`` root is dropped, and a span that several nested constituents cover (a unary chain) is labelled
by all of them, outermost first (``S-VP``). ``use_pos_tags``: the gold POS tags as ``pos_tags`` (namespace
``label_namespace_prefix + pos_label_namespace``); ``convert_parentheses``: ``-LRB-`` and its kin become ``(``...
in the words. The spans are ``(start, end)`` inclusive, by start then end (``max_span_width`` keeps the shorter ones
and the whole sentence, which the tree's root needs; None, the default, keeps all as AllenNLP did). The metadata
has the words, the gold tree (the ``evalb`` metric scores against it) and the POS tags. A malformed tree is one
error naming file:line. Reads only its share of the trees (distributed-aware).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.data.fields import MetadataField, PaddedArrayField, SequenceLabelField, TextField
from distrain.data.reader import DataError, DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token
from distrain.zoo.structured_prediction.trees import Tree, read_trees

PTB_PARENTHESES = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]"}
NO_LABEL = "NO-LABEL"


def strip_functional_tags(tree: Tree) -> None:
    """Phrase labels cut at the first ``=``, ``-`` or ``|`` in place; POS tags (a node over a word) kept whole."""
    tree.label = tree.label.split("=")[0].split("-")[0].split("|")[0]
    for child in tree.children:
        if isinstance(child, Tree) and child.children and not isinstance(child.children[0], str):
            strip_functional_tags(child)


def gold_spans(tree: Tree, start: int, spans: dict[tuple[int, int], str]) -> int:
    """Fill ``spans`` with each constituent's inclusive span and label (nested ones joined, outer first); returns
    where the tree ends (AllenNLP's ``_get_gold_spans``: a node whose first child is a word spans all its children
    as words)."""
    if not tree.children or isinstance(tree.children[0], str):
        return start + len(tree.children)
    end = start
    for child in tree.children:
        end = gold_spans(child, end, spans) if isinstance(child, Tree) else end + 1
    inner = spans.get((start, end - 1))
    spans[(start, end - 1)] = tree.label if inner is None else f"{tree.label}-{inner}"
    return end


def enumerate_spans(length: int, max_span_width: int | None = None) -> list[tuple[int, int]]:
    """Every inclusive ``(start, end)`` of a sentence, by start then end (AllenNLP's ``enumerate_spans``); with
    ``max_span_width`` only the spans that short, and the whole sentence."""
    width = length if max_span_width is None else max_span_width
    return [(start, end) for start in range(length) for end in range(start, length)
            if end - start < width or (start == 0 and end == length - 1)]


@DatasetReader.register("ptb_trees")
class PennTreeBankConstituencySpanDatasetReader(DatasetReader):
    """``tokens``, ``spans`` (``(spans, 2)``, padded with -1), ``metadata``, with ``use_pos_tags`` ``pos_tags``, and
    with a gold tree ``span_labels`` (namespace ``label_namespace_prefix + "labels"``)."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, use_pos_tags: bool = True,
                 convert_parentheses: bool = False, label_namespace_prefix: str = "", pos_label_namespace: str = "pos",
                 max_span_width: PositiveInt | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.use_pos_tags = use_pos_tags
        self.convert_parentheses = convert_parentheses
        self.label_namespace_prefix = label_namespace_prefix
        self.pos_label_namespace = pos_label_namespace
        self.max_span_width = max_span_width

    @classmethod
    def declared_fields(cls, arguments):
        fields = {"tokens": True, "spans": True, "metadata": True, "span_labels": False}
        if arguments.get("use_pos_tags", True):
            fields["pos_tags"] = True
        return fields

    def _read(self, path: Path) -> Iterator[dict]:
        try:
            for _, tree in self.shard_iterable(read_trees(path)):
                self.num_parsed += 1
                strip_functional_tags(tree)
                if tree.label in ("VROOT", "TOP") and tree.children and isinstance(tree.children[0], Tree):
                    tree = tree.children[0]
                pos_tags = [tag for _, tag in tree.pos()] if self.use_pos_tags else None
                yield self.text_to_instance(tree.leaves(), pos_tags, tree)
        except ValueError as error:
            if str(error).startswith(f"{path}:"):
                raise DataError(str(error)) from None
            raise

    def text_to_instance(self, tokens: list[str], pos_tags: list[str] | None = None,
                         gold_tree: Tree | None = None) -> dict:
        if self.convert_parentheses:
            tokens = [PTB_PARENTHESES.get(token, token) for token in tokens]
        text = TextField([Token(word) for word in tokens], self.token_indexers)
        instance: dict = {"tokens": text}
        if self.use_pos_tags:
            if pos_tags is None:
                raise DataError("use_pos_tags is set, but no POS tags were given")
            instance["pos_tags"] = SequenceLabelField(pos_tags, text,
                                                      label_namespace=self.label_namespace_prefix + self.pos_label_namespace)
        spans = enumerate_spans(len(tokens), self.max_span_width)
        instance["spans"] = PaddedArrayField([np.asarray(span, dtype=np.int64) for span in spans], pad_value=-1)
        metadata: dict[str, Any] = {"tokens": tokens}
        if gold_tree is not None:
            labelled: dict[tuple[int, int], str] = {}
            gold_spans(gold_tree, 0, labelled)
            instance["span_labels"] = SequenceLabelField([labelled.get(span, NO_LABEL) for span in spans],
                                                         namespace=self.label_namespace_prefix + "labels")
            metadata["gold_tree"] = gold_tree
        if self.use_pos_tags:
            metadata["pos_tags"] = pos_tags
        instance["metadata"] = MetadataField(metadata)
        return instance
