"""Semantic role labelling from OntoNotes 5.0 in the CoNLL-2012 format (AllenNLP's ``srl``): one instance per
predicate of each sentence (a sentence without one gives one instance with no predicate), with ``tokens``, a
0/1 ``verb_indicator`` marking the predicate, its PropBank arguments as BIO ``tags``, and in the metadata the
words, the verb, its index and the word-level gold tags (the ``srl_eval`` metric reads those).

``bert_model_name``: the words are split into that BERT's word pieces (lower-cased for an ``uncased`` model),
wrapped in ``[CLS]``/``[SEP]``; the indicator and tags follow the pieces (a word's later pieces continue its
span: ``B-X`` becomes ``I-X``) and the metadata's ``offsets`` give each word's first piece, as ``srl_bert``
decodes them. ``domain_identifier`` keeps only files under a folder of that name. The CoNLL-2012 columns are
read by :mod:`distrain.zoo.common.conll2012`, as ``ontonotes_ner`` reads them; files in sorted order.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from distrain.zoo.common.conll2012 import gold_conll_files, sentences, srl_frames
from distrain.data.fields import ArrayField, MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DataError, DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token
from distrain.pretrained import PretrainedName, load_tokenizer


@functools.lru_cache(maxsize=4)
def bert_vocabulary(name: str) -> tuple[dict[str, int], str]:
    """The word-piece vocabulary of ``name``'s tokenizer and its unknown token."""
    tokenizer = load_tokenizer(name)
    return tokenizer.get_vocab(), tokenizer.unk_token


def wordpieces(word: str, vocab: dict[str, int], unknown: str, longest: int = 100) -> list[str]:
    """BERT's WordPiece split of one word, greedy longest match first (``##`` marks a piece inside the word), as
    AllenNLP's reader called ``BertTokenizer.wordpiece_tokenizer``: one unknown token for a word it cannot split
    or longer than ``longest`` characters. (transformers 5 keeps that splitter only inside its fast tokenizer.)"""
    pieces: list[str] = []
    for token in word.split():
        if len(token) > longest:
            pieces.append(unknown)
            continue
        found, start = [], 0
        while start < len(token):
            end = len(token)
            while end > start and ("##" if start else "") + token[start:end] not in vocab:
                end -= 1
            if end == start:
                found = [unknown]
                break
            found.append(("##" if start else "") + token[start:end])
            start = end
        pieces += found
    return pieces


def wordpiece_tags(tags: list[str], ends: list[int]) -> list[str]:
    """Word tags spread over word pieces (``ends[i]``: one past word i's last piece, counting ``[CLS]`` out),
    with ``O`` for ``[CLS]`` and ``[SEP]``: a word's first piece keeps its tag, the later ones continue it."""
    pieces, start = ["O"], 0
    for tag, end in zip(tags, ends):
        if end > start:  # a word of no pieces has no tag
            pieces += [tag] + [tag if tag == "O" else "I-" + tag[2:]] * (end - start - 1)
        start = end
    return pieces + ["O"]


def wordpiece_indicator(indicator: list[int], ends: list[int]) -> list[int]:
    values, start = [0], 0
    for value, end in zip(indicator, ends):
        values += [value] * (end - start)
        start = end
    return values + [0]


@DatasetReader.register("srl")
class SrlReader(DatasetReader):
    """Reads only its share of the instances (distributed-aware)."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, domain_identifier: str | None = None,
                 bert_model_name: PretrainedName | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if token_indexers is None and bert_model_name is not None:
            from distrain.data.token_indexers.pretrained_transformer import PretrainedTransformerIndexer
            token_indexers = {"tokens": PretrainedTransformerIndexer(bert_model_name)}
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.domain_identifier = domain_identifier
        self.bert_model_name = bert_model_name
        self.lowercase_input = bert_model_name is not None and "uncased" in bert_model_name

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "verb_indicator": True, "metadata": True, "tags": False}

    def check_path(self, path: str | Path) -> None:
        if not self._files(Path(path)):
            raise DataError(f"no *gold_conll files found at {path}"
                            + (f" under a {self.domain_identifier}/ folder" if self.domain_identifier else ""))

    def _files(self, path: Path) -> list[Path]:
        files = gold_conll_files(path)
        if self.domain_identifier is not None:
            files = [file for file in files if self.domain_identifier in file.parts[:-1]]
        return files

    def _frames(self, path: Path) -> Iterator[tuple[list[str], list[int], list[str]]]:
        for file in self._files(path):
            for sentence in sentences(file):
                frames = srl_frames(sentence)
                if not frames:
                    yield sentence.words, [0] * len(sentence.words), ["O"] * len(sentence.words)
                for _, tags in frames:
                    yield sentence.words, [1 if tag[-2:] == "-V" else 0 for tag in tags], tags

    def _read(self, path: Path) -> Iterator[dict]:
        for words, indicator, tags in self.shard_iterable(self._frames(path)):
            self.num_parsed += 1
            yield self.text_to_instance([Token(word) for word in words], indicator, tags)

    def _wordpieces(self, words: list[str]) -> tuple[list[str], list[int], list[int]]:
        """The pieces with ``[CLS]``/``[SEP]``, and each word's end and first-piece offsets (AllenNLP's)."""
        vocab, unknown = bert_vocabulary(self.bert_model_name)
        pieces: list[str] = []
        ends, starts = [], []
        for word in words:
            split = wordpieces(word.lower() if self.lowercase_input else word, vocab, unknown)
            starts.append(len(pieces) + 1)
            pieces += split
            ends.append(len(pieces))
        return ["[CLS]", *pieces, "[SEP]"], ends, starts

    def text_to_instance(self, tokens: list[Token], verb_label: list[int], tags: list[str] | None = None) -> dict:
        words = [token.text for token in tokens]
        verb_index = verb_label.index(1) if any(verb_label) else None
        metadata: dict[str, Any] = {"words": words, "verb": None if verb_index is None else words[verb_index],
                                    "verb_index": verb_index}
        if self.bert_model_name is not None:
            pieces, ends, metadata["offsets"] = self._wordpieces(words)
            vocab, _ = bert_vocabulary(self.bert_model_name)
            text = TextField([Token(piece, text_id=vocab[piece]) for piece in pieces], self.token_indexers)
            indicator, piece_tags = wordpiece_indicator(verb_label, ends), tags and wordpiece_tags(tags, ends)
        else:
            text = TextField(tokens, self.token_indexers)
            indicator, piece_tags = verb_label, tags
        instance: dict = {"tokens": text, "verb_indicator": ArrayField(np.asarray(indicator, dtype=np.int64), 0)}
        if tags:
            instance["tags"] = SequenceLabelField(piece_tags, text)
            metadata["gold_tags"] = tags
        instance["metadata"] = MetadataField(metadata)
        return instance
