"""CoNLL-U files (Universal Dependencies; AllenNLP's ``universal_dependencies``), parsed here rather than by the
``conllu`` package AllenNLP used, with its rules: a blank line ends a sentence, ``#`` lines are comments, a word
line's columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC`` are split on a tab or on two or more
spaces. Multi-word tokens (``3-4``) and empty nodes (``8.1``) are dropped, as AllenNLP dropped every word
without an integer id: the parse is of the words as written.

A word line with fewer than 8 columns, an id or head that is not a number, a head outside the sentence, or no
language-specific tag where ``use_language_specific_pos`` asks for one is one line naming file:line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from distrain.data.fields import ArrayField, MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer

_SEPARATOR = re.compile(r"\t| {2,}")
_WORD_ID = re.compile(r"0|[1-9][0-9]*")
_OTHER_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*|[0-9]+\.[1-9][0-9]*")
#: the columns a parse needs: through DEPREL
NEEDED_COLUMNS = 8
ID, FORM, UPOS, XPOS, HEAD, DEPREL = 0, 1, 3, 4, 6, 7


@dataclass
class Word:
    form: str
    upos: str
    xpos: str | None
    head: int
    deprel: str
    line: int


def sentences(path: Path) -> Iterator[list[tuple[int, str]]]:
    """Each sentence's non-comment lines as ``(line number, stripped line)``."""
    sentence: list[tuple[int, str]] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line:
                if sentence:
                    yield sentence
                sentence = []
            elif not line.startswith("#"):
                sentence.append((number, line))
    if sentence:
        yield sentence


@DatasetReader.register("universal_dependencies")
class UniversalDependenciesDatasetReader(DatasetReader):
    """``words``, ``pos_tags`` (namespace ``pos``: UPOS, or XPOS with ``use_language_specific_pos``), and with
    a parse ``head_tags`` (namespace ``head_tags``) and ``head_indices`` (1-based, 0 the root: numbers, not
    labels); ``metadata`` keeps the words and tags. Reads only its share of the sentences (distributed-aware)."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, use_language_specific_pos: bool = False,
                 tokenizer: Tokenizer | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.use_language_specific_pos = use_language_specific_pos
        self.tokenizer = tokenizer

    @classmethod
    def declared_fields(cls, arguments):
        return {"words": True, "pos_tags": True, "metadata": True, "head_tags": False, "head_indices": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for sentence in self.shard_iterable(sentences(path)):
            self.num_parsed += 1
            words = self._words(path, sentence)
            if words is not None:
                tags = [word.xpos if self.use_language_specific_pos else word.upos for word in words]
                yield self.text_to_instance([word.form for word in words], tags,
                                            [(word.deprel, word.head) for word in words])

    def _words(self, path: Path, sentence: list[tuple[int, str]]) -> list[Word] | None:
        """The sentence's words (multi-word tokens and empty nodes left out), checked; None if skipped."""
        words = []
        for number, line in sentence:
            columns = _SEPARATOR.split(line)
            if len(columns) < NEEDED_COLUMNS:
                return self.invalid(path, number, f"expected 10 columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL "
                                                  f"DEPS MISC, at least the first {NEEDED_COLUMNS}), got {len(columns)}")
            if _OTHER_ID.fullmatch(columns[ID]):
                continue
            if not _WORD_ID.fullmatch(columns[ID]):
                return self.invalid(path, number, f"{columns[ID]!r} is not a word id (N, N-M or N.M)")
            if not _WORD_ID.fullmatch(columns[HEAD]):
                return self.invalid(path, number, f"head {columns[HEAD]!r} is not a word number")
            xpos = columns[XPOS] if columns[XPOS] not in ("", "_") else None
            if self.use_language_specific_pos and xpos is None:
                return self.invalid(path, number, "no language-specific POS tag (XPOS is _), which "
                                                  "use_language_specific_pos reads")
            words.append(Word(columns[FORM], columns[UPOS], xpos, int(columns[HEAD]), columns[DEPREL], number))
        for word in words:
            if word.head > len(words):
                return self.invalid(path, word.line, f"head {word.head} is outside the sentence of {len(words)} words")
        return words

    def text_to_instance(self, words: list[str], upos_tags: list[str],
                         dependencies: list[tuple[str, int]] | None = None) -> dict:
        tokens = self.tokenizer.tokenize(" ".join(words)) if self.tokenizer is not None else [Token(w) for w in words]
        text = TextField(tokens, self.token_indexers)
        instance: dict = {"words": text, "pos_tags": SequenceLabelField(upos_tags, text, label_namespace="pos")}
        if dependencies is not None:
            instance["head_tags"] = SequenceLabelField([tag for tag, _ in dependencies], text,
                                                       label_namespace="head_tags")
            instance["head_indices"] = ArrayField(np.asarray([head for _, head in dependencies], dtype=np.int64))
        instance["metadata"] = MetadataField({"words": words, "pos": upos_tags})
        return instance
