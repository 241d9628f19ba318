"""Coreference from OntoNotes 5.0 in the CoNLL-2012 format (AllenNLP's ``coref``): one instance per document, its
words as one ``text``, every candidate mention as ``spans`` (each sentence's spans of at most ``max_span_width``
words, by start then end), and with gold clusters each candidate's cluster id as ``span_labels`` (-1: in none); the
metadata keeps the words (``original_text``) and the gold ``clusters`` (the ``conll_coref_scores`` and
``mention_recall`` metrics read those).

As AllenNLP's: the coreference column of each sentence gives mentions per entity id, shifted to the document's word
positions; clusters that share a mention are merged; ``/.`` and ``/?`` (OntoNotes' escaped punctuation) are read as
``.`` and ``?``; ``max_sentences`` keeps a document's first sentences and the mentions that end inside them;
``remove_singleton_clusters`` drops one-mention clusters. The columns are read by :mod:`distrain.zoo.common.conll2012`.
(AllenNLP's ``wordpiece_modeling_tokenizer``, which models word pieces instead of words, is not offered: its
configs use the ``pretrained_transformer_mismatched`` indexer, which embeds words.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.zoo.common.conll2012 import coref_spans, documents, gold_conll_files
from distrain.data.fields import ArrayField, MetadataField, PaddedArrayField, TextField
from distrain.data.reader import DataError, DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token

Span = tuple[int, int]


def candidate_spans(lengths: list[int], max_span_width: int) -> list[Span]:
    """Each sentence's inclusive spans of at most ``max_span_width`` words, at document positions (AllenNLP's
    ``enumerate_spans`` per sentence)."""
    spans, offset = [], 0
    for length in lengths:
        spans += [(offset + start, offset + end) for start in range(length)
                  for end in range(start, min(start + max_span_width, length))]
        offset += length
    return spans


def merge_clusters(clusters: list[list[Span]]) -> list[list[Span]]:
    """Clusters that share a mention joined into the first of them (AllenNLP's ``_canonicalize_clusters``; it
    kept each cluster as a set, so the order of mentions inside one carries no meaning: here, sorted)."""
    merged: list[set[Span]] = []
    for cluster in clusters:
        home = next((seen for mention in cluster for seen in merged if mention in seen), None)
        if home is not None:
            home.update(cluster)
        else:
            merged.append(set(cluster))
    return [sorted(cluster) for cluster in merged]


def normalize_word(word: str) -> str:
    return word[1:] if word in ("/.", "/?") else word


@DatasetReader.register("coref")
class ConllCorefReader(DatasetReader):
    """Reads only its share of the documents (distributed-aware)."""

    distributed_aware = True

    def __init__(self, max_span_width: PositiveInt, token_indexers: dict[str, TokenIndexer] | None = None,
                 max_sentences: PositiveInt | None = None, remove_singleton_clusters: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_span_width = max_span_width
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.max_sentences = max_sentences
        self.remove_singleton_clusters = remove_singleton_clusters

    @classmethod
    def declared_fields(cls, arguments):
        return {"text": True, "spans": True, "metadata": True, "span_labels": False}

    def check_path(self, path: str | Path) -> None:
        if not gold_conll_files(Path(path)):
            raise DataError(f"no *gold_conll files found at {path}")

    def _documents(self, path: Path) -> Iterator[tuple[list[list[str]], list[list[Span]]]]:
        for file in gold_conll_files(path):
            for document in documents(file):
                clusters: dict[int, list[Span]] = {}
                offset = 0
                for sentence in document:
                    for entity, (start, end) in coref_spans(sentence):
                        clusters.setdefault(entity, []).append((start + offset, end + offset))
                    offset += len(sentence.words)
                yield [sentence.words for sentence in document], list(clusters.values())

    def _read(self, path: Path) -> Iterator[dict]:
        for sentences, clusters in self.shard_iterable(self._documents(path)):
            self.num_parsed += 1
            yield self.text_to_instance(sentences, clusters)

    def text_to_instance(self, sentences: list[list[str]], gold_clusters: list[list[Span]] | None = None) -> dict:
        if self.max_sentences is not None and len(sentences) > self.max_sentences:
            sentences = sentences[:self.max_sentences]
            words = sum(len(sentence) for sentence in sentences)
            if gold_clusters is not None:
                kept = [[mention for mention in cluster if mention[1] < words] for cluster in gold_clusters]
                gold_clusters = [cluster for cluster in kept if cluster]
        words = [normalize_word(word) for sentence in sentences for word in sentence]
        text = TextField([Token(word) for word in words], self.token_indexers)
        spans = candidate_spans([len(sentence) for sentence in sentences], self.max_span_width)
        instance: dict = {"text": text,
                          "spans": PaddedArrayField([np.asarray(span, dtype=np.int64) for span in spans], pad_value=-1)}
        metadata: dict[str, Any] = {"original_text": words}
        if gold_clusters is not None:
            clusters = merge_clusters([[tuple(mention) for mention in cluster] for cluster in gold_clusters])
            if self.remove_singleton_clusters:
                clusters = [cluster for cluster in clusters if len(cluster) > 1]
            cluster_of = {mention: index for index, cluster in enumerate(clusters) for mention in cluster}
            labels = [cluster_of.get(span, -1) for span in spans]
            instance["span_labels"] = ArrayField(np.asarray(labels, dtype=np.int64), pad_value=-1)
            metadata["clusters"] = clusters
        instance["metadata"] = MetadataField(metadata)
        return instance
