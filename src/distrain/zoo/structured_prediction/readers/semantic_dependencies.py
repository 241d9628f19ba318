"""SemEval 2015 Task 18 files (broad-coverage semantic dependencies, ``.sdp``; AllenNLP's ``semantic_dependencies``):
one word a line, tab-separated ``ID FORM LEMMA POS HEAD DEPREL TOP PRED FRAME`` then one column per predicate (the
words with ``PRED`` ``+``, in order), whose non-``_`` entries label an arc from the word to that predicate; a blank
line ends a sentence, ``#`` lines are comments. A word may have several heads: the arcs form a graph, not a tree.

A line with fewer than 9 columns, or an argument column with no predicate to match, is one line naming file:line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import AdjacencyField, MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token

FIELDS = ("id", "form", "lemma", "pos", "head", "deprel", "top", "pred", "frame")
FORM, POS, PRED = 1, 3, 7


def sentences(path: Path) -> Iterator[list[tuple[int, list[str]]]]:
    """Each sentence's word lines as ``(line number, tab-separated columns)``."""
    sentence: list[tuple[int, list[str]]] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                if sentence:
                    yield sentence
                sentence = []
            elif not line.strip().startswith("#"):
                sentence.append((number, line.split("\t")))
    if sentence:
        yield sentence


@DatasetReader.register("semantic_dependencies")
class SemanticDependenciesDatasetReader(DatasetReader):
    """``tokens``, ``pos_tags`` (namespace ``pos``), ``arc_tags`` (an adjacency matrix: ``[word, head]`` holds the
    label id, -1 where there is no arc) and ``metadata``; with ``skip_when_no_arcs`` a sentence without arcs is left
    out, as AllenNLP's. Reads only its share of the sentences (distributed-aware)."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, skip_when_no_arcs: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.skip_when_no_arcs = skip_when_no_arcs

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "metadata": True, "pos_tags": False, "arc_tags": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for sentence in self.shard_iterable(sentences(path)):
            self.num_parsed += 1
            parsed = self._parse(path, sentence)
            if parsed is None or (self.skip_when_no_arcs and not parsed[2]):
                continue
            yield self.text_to_instance(*parsed)

    def _parse(self, path: Path, sentence: list[tuple[int, list[str]]]) -> tuple | None:
        """``(words, POS tags, arcs (word, predicate), arc labels)``, or None if skipped."""
        for number, columns in sentence:
            if len(columns) < len(FIELDS):
                return self.invalid(path, number, f"expected at least {len(FIELDS)} tab-separated columns "
                                                  f"({' '.join(name.upper() for name in FIELDS)}), got {len(columns)}")
        predicates = [index for index, (_, columns) in enumerate(sentence) if columns[PRED] == "+"]
        arcs, labels = [], []
        for index, (number, columns) in enumerate(sentence):
            for argument, label in enumerate(columns[len(FIELDS):]):
                if label == "_":
                    continue
                if argument >= len(predicates):
                    return self.invalid(path, number, f"an argument in column {len(FIELDS) + argument + 1}, but the "
                                                      f"sentence has {len(predicates)} predicates (PRED +)")
                arcs.append((index, predicates[argument]))
                labels.append(label)
        return [c[FORM] for _, c in sentence], [c[POS] for _, c in sentence], arcs, labels

    def text_to_instance(self, tokens: list[str], pos_tags: list[str] | None = None,
                         arc_indices: list[tuple[int, int]] | None = None, arc_tags: list[str] | None = None) -> dict:
        text = TextField([Token(word) for word in tokens], self.token_indexers)
        instance: dict = {"tokens": text, "metadata": MetadataField({"tokens": tokens})}
        if pos_tags is not None:
            instance["pos_tags"] = SequenceLabelField(pos_tags, text, label_namespace="pos")
        if arc_indices is not None and arc_tags is not None:
            instance["arc_tags"] = AdjacencyField(arc_indices, text, arc_tags)
        return instance
