"""CoNLL 2003 files (AllenNLP's ``conll2003``): one ``word POS chunk NER`` line per token, a blank line
between sentences, ``-DOCSTART-`` lines between documents.

``tag_label`` picks the column that becomes ``tags``; ``feature_labels`` add others as ``pos_tags``,
``chunk_tags``, ``ner_tags``. Chunk and NER tags are read in ``coding_scheme`` (IOB1, as the data ships,
or BIO) and converted to ``convert_to_coding_scheme``. AllenNLP's older form ``coding_scheme: "BIOUL"``
means IOB1 input converted to BIOUL, as there. A line with another number of columns, or a tag outside
its scheme, is named by file:line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from distrain.config.errors import ConfigError
from distrain.data.fields import MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.zoo.tagging.readers.tag_fields import declared_tag_fields
from distrain.zoo.tagging.readers.tag_schemes import convert, scheme_problem
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token

COLUMNS = ("tokens", "pos", "chunk", "ner")
SPAN_LABELS = ("chunk", "ner")


def sentences(path: Path) -> Iterator[list[tuple[int, list[str]]]]:
    """Each sentence as its ``(line number, columns)`` lines; document separators dropped."""
    sentence: list[tuple[int, list[str]]] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            columns = line.split()
            if not columns or columns[0] == "-DOCSTART-":
                if sentence:
                    yield sentence
                sentence = []
                continue
            sentence.append((number, columns))
    if sentence:
        yield sentence


class ConllSentencesReader(DatasetReader):
    """A CoNLL-style reader of column files, one sentence between blank lines: reads only its share of the
    sentences (distributed-aware), checks each one's columns (``_columns``: by name, ``tokens`` first, or None where
    the sentence is skipped) and makes an instance of them (``text_to_instance(tokens, <name>_tags=...)``)."""

    distributed_aware = True

    @classmethod
    def declared_fields(cls, arguments):
        return declared_tag_fields(arguments, metadata=True)

    def _read(self, path: Path) -> Iterator[dict]:
        for sentence in self.shard_iterable(sentences(path)):
            self.num_parsed += 1
            columns = self._columns(path, sentence)
            if columns is not None:
                words = columns.pop("tokens")
                yield self.text_to_instance([Token(word) for word in words],
                                            **{f"{name}_tags": tags for name, tags in columns.items()})

    def _columns(self, path: Path, sentence: list[tuple[int, list[str]]]) -> dict[str, list[str]] | None:
        raise NotImplementedError


@DatasetReader.register("conll2003")
class Conll2003DatasetReader(ConllSentencesReader):
    """Reads only its share of the sentences (distributed-aware)."""

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None,
                 tag_label: Literal["ner", "pos", "chunk"] = "ner",
                 feature_labels: Sequence[Literal["ner", "pos", "chunk"]] = (),
                 coding_scheme: Literal["IOB1", "BIO", "BIOUL"] = "IOB1",
                 convert_to_coding_scheme: Literal["BIO", "BIOUL"] | None = None,
                 label_namespace: str = "labels", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.tag_label = tag_label
        self.feature_labels = list(feature_labels)
        if coding_scheme == "BIOUL":  # AllenNLP's older spelling of "IOB1 converted to BIOUL"
            coding_scheme, convert_to_coding_scheme = "IOB1", "BIOUL"
        if coding_scheme not in ("IOB1", "BIO") or convert_to_coding_scheme not in (None, "BIO", "BIOUL"):
            raise ConfigError(f"conll2003: coding_scheme is IOB1 or BIO and convert_to_coding_scheme BIO or BIOUL; got "
                              f"{coding_scheme!r} and {convert_to_coding_scheme!r}")  # the config check says so first
        self.coding_scheme = coding_scheme
        self.convert_to_coding_scheme = convert_to_coding_scheme
        self.label_namespace = label_namespace

    def _columns(self, path: Path, sentence: list[tuple[int, list[str]]]) -> dict[str, list[str]] | None:
        """The sentence's columns by name, each tag checked against its scheme; None if skipped."""
        for number, columns in sentence:
            if len(columns) != len(COLUMNS):
                self.invalid(path, number, f"expected {len(COLUMNS)} columns (word POS chunk NER), got {len(columns)}")
                return None
            for name in SPAN_LABELS:
                problem = scheme_problem(columns[COLUMNS.index(name)], self.coding_scheme)
                if problem:
                    self.invalid(path, number, f"{name} {problem}")
                    return None
        return {name: [columns[i] for _, columns in sentence] for i, name in enumerate(COLUMNS)}

    def text_to_instance(self, tokens: list[Token], pos_tags: list[str] | None = None,
                         chunk_tags: list[str] | None = None, ner_tags: list[str] | None = None) -> dict:
        text = TextField(tokens, self.token_indexers)
        instance: dict = {"tokens": text, "metadata": MetadataField({"words": [t.text for t in tokens]})}
        tags = {"pos": pos_tags,
                "chunk": chunk_tags and convert(chunk_tags, self.coding_scheme, self.convert_to_coding_scheme),
                "ner": ner_tags and convert(ner_tags, self.coding_scheme, self.convert_to_coding_scheme)}
        for label in self.feature_labels:
            if tags[label] is not None:
                instance[f"{label}_tags"] = SequenceLabelField(tags[label], text, label_namespace=f"{label}_tags")
        if tags[self.tag_label] is not None:
            instance["tags"] = SequenceLabelField(tags[self.tag_label], text, label_namespace=self.label_namespace)
        return instance
