"""The parts of the CoNLL-2012 (OntoNotes 5.0) format that named-entity, semantic-role and coreference readers need:
the word (column 4), the named-entity column (11), the predicate-argument columns (12 to the last but one) and the
coreference column (the last), read from the ``*gold_conll`` files under a folder.

Each line is one token with at least 12 whitespace-separated columns (document id, part, word number, word,
POS, parse bit, lemma, frameset, sense, speaker, named entities, predicate arguments..., coreference); a
blank line or a ``#begin/#end document`` line ends a sentence. Named entities are bracketed: ``(GPE*``
opens a span, ``*)`` closes it, ``(GPE)`` is a one-word span, ``*`` is outside or inside; they are returned
as BIO tags, as AllenNLP's ``Ontonotes`` helper returns them. Predicate-argument columns (one per predicate,
bracketed the same way, ``(V*)`` marking the predicate) are parsed only when asked (:func:`srl_frames`), as is the
coreference column (:func:`coref_spans`: ``(7`` opens a mention of entity 7, ``7)`` closes it, ``(7)`` is one word,
``|`` joins several, ``-`` is none); :func:`documents` groups sentences by ``#begin/#end document``. A line that
breaks this is one :class:`~distrain.errors.DataError` naming file:line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from distrain.data.reader import DataError

#: AllenNLP's reader indexes columns 0-10 and the last (coreference), so 12 is the fewest that parse
MIN_COLUMNS = 12
WORD, PART, NAMED_ENTITIES = 3, 1, 10
_ANNOTATION = re.compile(r"^(?:\((?P<label>[^()*\s]+))?\*?(?P<close>\))?$")


@dataclass
class ConllSentence:
    """One sentence: where it starts (file:line), its words, its named entities as BIO tags, and its lines
    (line number, columns) for the columns parsed only on demand."""

    path: Path
    line: int
    words: list[str]
    named_entities: list[str]
    rows: list[tuple[int, list[str]]]


def gold_conll_files(path: Path) -> list[Path]:
    """``path`` itself if it is a file, else the ``*gold_conll`` files under it, in sorted order (AllenNLP
    walks the folder in the file system's order)."""
    if path.is_file():
        return [path]
    return sorted(Path(root, name) for root, _, names in os.walk(path) for name in names
                  if name.endswith("gold_conll"))


def sentences(path: Path) -> Iterator[ConllSentence]:
    """The sentences of one CoNLL-2012 file."""
    for document in documents(path):
        yield from document


def documents(path: Path) -> Iterator[list[ConllSentence]]:
    """The documents of one CoNLL-2012 file, each its sentences (AllenNLP's ``dataset_document_iterator``: a
    document ends at ``#end document``, and the file's end ends the last)."""
    rows: list[tuple[int, list[str]]] = []
    document: list[ConllSentence] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if line and not line.startswith("#"):
                rows.append((number, line.split()))
                continue
            if rows:
                document.append(_sentence(path, rows))
                rows = []
            if line.startswith("#end document") and document:
                yield document
                document = []
    if rows:
        document.append(_sentence(path, rows))
    if document:
        yield document


def _sentence(path: Path, rows: list[tuple[int, list[str]]]) -> ConllSentence:
    words, tags, open_label = [], [], None
    for number, columns in rows:
        if len(columns) < MIN_COLUMNS:
            raise DataError(f"{path}:{number}: expected at least {MIN_COLUMNS} columns (CoNLL-2012), "
                            f"got {len(columns)}")
        if not columns[PART].isdigit():
            raise DataError(f"{path}:{number}: part number (column 2) must be an integer, got {columns[PART]!r}")
        annotation = columns[NAMED_ENTITIES]
        match = _ANNOTATION.match(annotation)
        if match is None or annotation == "":
            raise DataError(f"{path}:{number}: named-entity column 11 {annotation!r} is not *, (TYPE*, *) or (TYPE)")
        tag, open_label = _bracketed_tag(path, number, match, open_label, "named entity")
        tags.append(tag)
        words.append(columns[WORD])
    return ConllSentence(path, rows[0][0], words, tags, rows)


def _bio(path: Path, rows: list[tuple[int, list[str]]], column: int, what: str) -> list[str]:
    """The BIO tags of one bracketed column: ``(TYPE*`` opens, ``*)`` closes, ``(TYPE*)`` is one word."""
    tags, open_label = [], None
    for number, columns in rows:
        annotation = columns[column]
        match = _ANNOTATION.match(annotation)
        if match is None:
            raise DataError(f"{path}:{number}: {what} column {column + 1} {annotation!r} is not *, (TYPE*, *) or (TYPE*)")
        tag, open_label = _bracketed_tag(path, number, match, open_label, what)
        tags.append(tag)
    if open_label is not None:
        raise DataError(f"{path}:{rows[-1][0]}: {what} {open_label!r} is still open at the sentence's end")
    return tags


def _bracketed_tag(path: Path, number: int, match: re.Match, open_label: str | None,
                   what: str) -> tuple[str, str | None]:
    """One word's BIO tag from its bracketed annotation (``match``), given the span open before it, and the span
    open after it; a span opened inside another or closed with none open is an error naming the line."""
    label = match["label"]
    if label is not None and open_label is not None:
        raise DataError(f"{path}:{number}: {what} {label!r} opens inside the open {open_label!r}")
    if label is None and match["close"] and open_label is None:
        raise DataError(f"{path}:{number}: {what} closes with none open")
    if label is not None:
        open_label = label
    tag = f"B-{label}" if label is not None else f"I-{open_label}" if open_label is not None else "O"
    return tag, None if match["close"] else open_label


def srl_frames(sentence: ConllSentence) -> list[tuple[int, list[str]]]:
    """Each predicate's ``(index of its word, BIO argument tags)``, in column order, as AllenNLP pairs them: the
    n-th predicate-argument column with the n-th word that opens a ``(V`` in any of them."""
    path, rows = sentence.path, sentence.rows
    width = len(rows[0][1])
    for number, columns in rows:
        if len(columns) != width:
            raise DataError(f"{path}:{number}: {len(columns)} columns where the sentence's first line "
                            f"({path}:{rows[0][0]}) has {width}: every word needs one tag per predicate")
    arguments = [_bio(path, rows, column, "argument") for column in range(NAMED_ENTITIES + 1, width - 1)]
    predicates = [i for i, (_, columns) in enumerate(rows) if any("(V" in tag for tag in columns[NAMED_ENTITIES + 1:-1])]
    return list(zip(predicates, arguments))


_MENTION = re.compile(r"^(?P<open>\()?(?P<entity>\d+)(?P<close>\))?$")


def coref_spans(sentence: ConllSentence) -> list[tuple[int, tuple[int, int]]]:
    """The sentence's mentions as ``(entity id, (first word, last word))``, in the order they close (AllenNLP's
    ``coref_spans``, which it keeps as a set: the order carries no meaning). A mention closes the latest one of its
    entity still open; one that closes with none open, or stays open at the sentence's end, is an error."""
    path, found = sentence.path, []
    opened: dict[int, list[tuple[int, int]]] = {}
    for word, (number, columns) in enumerate(sentence.rows):
        annotation = columns[-1]
        if annotation == "-":
            continue
        for segment in annotation.split("|"):
            match = _MENTION.match(segment)
            if match is None or not (match["open"] or match["close"]):
                raise DataError(f"{path}:{number}: coreference column {annotation!r} is not -, or (N, N) and (N) "
                                f"joined by |")
            entity = int(match["entity"])
            if match["open"] and match["close"]:
                found.append((entity, (word, word)))
            elif match["open"]:
                opened.setdefault(entity, []).append((word, number))
            elif not opened.get(entity):
                raise DataError(f"{path}:{number}: coreference mention of entity {entity} closes with none open")
            else:
                found.append((entity, (opened[entity].pop()[0], word)))
    for entity, starts in opened.items():
        if starts:
            raise DataError(f"{path}:{starts[-1][1]}: coreference mention of entity {entity} opens here and is still "
                            f"open at the sentence's end")
    return found
