"""CoNLL 2000 chunking files (AllenNLP's ``conll2000``): one ``word POS chunk`` line per token, a blank line
between sentences, chunks in BIO.

``tag_label`` picks the column that becomes ``tags``; ``feature_labels`` add the others as ``pos_tags`` and
``chunk_tags``, each in its own namespace. ``convert_to_coding_scheme: "BIOUL"`` converts the chunks (AllenNLP's
deprecated ``coding_scheme`` says the same: ``BIO`` keeps them). A line with another number of columns, or a chunk
tag outside BIO, is named by file:line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Sequence

from distrain.data.fields import MetadataField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token
from distrain.zoo.tagging.readers.conll2003 import ConllSentencesReader
from distrain.zoo.tagging.readers.tag_fields import tag_fields
from distrain.zoo.tagging.readers.tag_schemes import convert, scheme_problem

Label = Literal["pos", "chunk"]


@DatasetReader.register("conll2000")
class Conll2000DatasetReader(ConllSentencesReader):
    """Reads only its share of the sentences (distributed-aware)."""

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, tag_label: Label = "chunk",
                 feature_labels: Sequence[Label] = (), convert_to_coding_scheme: Literal["BIOUL"] | None = None,
                 label_namespace: str = "labels", coding_scheme: Literal["BIO", "BIOUL"] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.tag_label = tag_label
        self.feature_labels = set(feature_labels)
        if coding_scheme is not None:  # AllenNLP's deprecated spelling of convert_to_coding_scheme
            convert_to_coding_scheme = "BIOUL" if coding_scheme == "BIOUL" else None
        self.convert_to_coding_scheme = convert_to_coding_scheme
        self.label_namespace = label_namespace

    def _columns(self, path: Path, sentence: list[tuple[int, list[str]]]) -> dict[str, list[str]] | None:
        """The sentence's words, POS tags and chunks, each line checked; None if skipped."""
        for number, columns in sentence:
            if len(columns) != 3:
                problem = f"expected 3 columns (word POS chunk), got {len(columns)}"
            elif (wrong := scheme_problem(columns[2], "BIO")) is not None:
                problem = f"chunk {wrong}"
            else:
                continue
            self.invalid(path, number, problem)
            return None
        return {name: [columns[i] for _, columns in sentence] for i, name in enumerate(("tokens", "pos", "chunk"))}

    def text_to_instance(self, tokens: list[Token], pos_tags: list[str] | None = None,
                         chunk_tags: list[str] | None = None) -> dict:
        text = TextField(tokens, self.token_indexers)
        instance: dict = {"tokens": text, "metadata": MetadataField({"words": [t.text for t in tokens]})}
        tags = {"pos": pos_tags, "chunk": chunk_tags and convert(chunk_tags, "BIO", self.convert_to_coding_scheme)}
        instance.update(tag_fields(text, tags, self.tag_label, self.feature_labels, self.label_namespace, "conll2000"))
        return instance
