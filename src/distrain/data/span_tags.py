"""Spans from tag sequences (BIO, IOB1, BIOUL, BMES), BIOUL conversion and span enumeration: the span helpers
AllenNLP's readers and span metrics use (its ``dataset_utils.span_utils``), with its results.

A span is ``(label, (first, last))``, both ends inclusive; a tag is ``PREFIX-LABEL`` or a bare prefix (label
``""``). Ill-formed BIO/IOB1 sequences still give spans (an ``I`` that opens nothing opens a span); a prefix
outside the scheme, or a BIOUL span left open, raises :class:`InvalidTagSequence`.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

TypedSpan = tuple[int, tuple[int, int]]
TypedStringSpan = tuple[str, tuple[int, int]]
T = TypeVar("T")


class InvalidTagSequence(Exception):
    def __init__(self, tag_sequence: Sequence[str] | None = None) -> None:
        super().__init__(" ".join(tag_sequence or ()))
        self.tag_sequence = tag_sequence


def _split(tag: str, prefixes: str, sequence: Sequence[str]) -> tuple[str, str]:
    prefix, _, label = tag.partition("-")
    if prefix not in prefixes or len(prefix) != 1:
        raise InvalidTagSequence(sequence)
    return prefix, label


def _chunks(tag_sequence: Sequence[str], classes_to_ignore: Sequence[str] | None, opens: Callable) -> list:
    """Spans of a B/I/O sequence: ``opens(prefix, label, previous_prefix, previous_label)`` says whether a tag
    starts a new span rather than going on with the open one."""
    ignore = set(classes_to_ignore or ())
    spans, open_span = [], None
    previous = ("O", "")
    for index, tag in enumerate(tag_sequence):
        prefix, label = _split(tag, "BIO", tag_sequence)
        if prefix == "O" or label in ignore:
            if open_span:
                spans.append(open_span)
            open_span, previous = None, ("O", label)
            continue
        if open_span is None or opens(prefix, label, *previous):
            if open_span:
                spans.append(open_span)
            open_span = (label, (index, index))
        else:
            open_span = (label, (open_span[1][0], index))
        previous = (prefix, label)
    if open_span:
        spans.append(open_span)
    return list(dict.fromkeys(spans))


def bio_tags_to_spans(tag_sequence: Sequence[str], classes_to_ignore: Sequence[str] | None = None
                      ) -> list[TypedStringSpan]:
    return _chunks(tag_sequence, classes_to_ignore,
                   lambda prefix, label, _, previous_label: prefix == "B" or label != previous_label)


def iob1_tags_to_spans(tag_sequence: Sequence[str], classes_to_ignore: Sequence[str] | None = None
                       ) -> list[TypedStringSpan]:
    return _chunks(tag_sequence, classes_to_ignore,
                   lambda prefix, label, previous, previous_label: prefix == "B" or previous == "O"
                   or label != previous_label)


def bioul_tags_to_spans(tag_sequence: Sequence[str], classes_to_ignore: Sequence[str] | None = None
                        ) -> list[TypedStringSpan]:
    """BIOUL spans in order; a ``B`` must be closed by an ``L`` with only ``I`` between."""
    spans, index = [], 0
    while index < len(tag_sequence):
        prefix, label = tag_sequence[index][0], tag_sequence[index].partition("-")[2]
        if prefix == "U":
            spans.append((label, (index, index)))
        elif prefix == "B":
            start = index
            while tag_sequence[index][0] != "L":
                index += 1
                if index >= len(tag_sequence) or tag_sequence[index][0] not in "IL":
                    raise InvalidTagSequence(tag_sequence)
            spans.append((tag_sequence[index].partition("-")[2], (start, index)))
        elif tag_sequence[index] != "O":
            raise InvalidTagSequence(tag_sequence)
        index += 1
    ignore = set(classes_to_ignore or ())
    return [span for span in spans if span[0] not in ignore]


def bmes_tags_to_spans(tag_sequence: Sequence[str], classes_to_ignore: Sequence[str] | None = None
                       ) -> list[TypedStringSpan]:
    """BMES spans: an ``M`` or ``E`` goes on the span a ``B`` or ``M`` of its label opened; anything else opens
    a span."""
    spans: list[list] = []
    previous = None
    for index, tag in enumerate(tag_sequence):
        prefix, label = tag[0], tag[2:]
        if prefix in "ME" and previous in ("B", "M") and spans[-1][0] == label:
            spans[-1][2] = index
        else:
            spans.append([label, index, index])
        previous = prefix
    ignore = set(classes_to_ignore or ())
    return [(label, (first, last)) for label, first, last in spans if label not in ignore]


def to_bioul(tag_sequence: Sequence[str], encoding: str = "IOB1") -> list[str]:
    """A BIO or IOB1 sequence rewritten in BIOUL; a BIO ``I`` that opens nothing raises InvalidTagSequence."""
    if encoding not in ("IOB1", "BIO"):
        raise ValueError(f"to_bioul converts IOB1 or BIO, not {encoding!r}")
    if encoding == "BIO":
        previous = ("O", "")
        for tag in tag_sequence:
            prefix, label = _split(tag, "BIO", tag_sequence)
            if prefix == "I" and (previous[0] == "O" or previous[1] != label):
                raise InvalidTagSequence(tag_sequence)
            previous = (prefix, label)
    spans = (bio_tags_to_spans if encoding == "BIO" else iob1_tags_to_spans)(tag_sequence)
    tags = ["O"] * len(tag_sequence)

    def tagged(prefix: str, label: str) -> str:
        return f"{prefix}-{label}" if label else prefix

    for label, (first, last) in spans:
        if first == last:
            tags[first] = tagged("U", label)
            continue
        tags[first], tags[last] = tagged("B", label), tagged("L", label)
        for inside in range(first + 1, last):
            tags[inside] = tagged("I", label)
    return tags


def iob1_to_bioul(tag_sequence: Sequence[str]) -> list[str]:
    return to_bioul(tag_sequence, encoding="IOB1")


def enumerate_spans(sentence: Sequence[T], offset: int = 0, max_span_width: int | None = None,
                    min_span_width: int = 1, filter_function: Callable[[Sequence[T]], bool] | None = None
                    ) -> list[tuple[int, int]]:
    """Every ``(first, last)`` span of ``sentence`` between the two widths (shifted by ``offset``), in order of
    start then end, that ``filter_function`` accepts."""
    widest = max_span_width or len(sentence)
    spans = []
    for start in range(len(sentence)):
        for end in range(min(start + min_span_width - 1, len(sentence)), min(start + widest, len(sentence))):
            if filter_function is None or filter_function(sentence[start:end + 1]):
                spans.append((offset + start, offset + end))
    return spans
