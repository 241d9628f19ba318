"""Span tag schemes as readers meet them: check that a tag belongs to its scheme and convert IOB1 or
BIO tags to BIO or BIOUL (CoNLL 2003 ships IOB1; taggers train better on BIOUL)."""

from __future__ import annotations

from typing import Sequence

PREFIXES = {"IOB1": ("B", "I"), "BIO": ("B", "I"), "BIOUL": ("B", "I", "L", "U")}


def scheme_problem(tag: str, scheme: str) -> str | None:
    """Why ``tag`` is not a ``scheme`` tag, or None when it is."""
    if tag == "O":
        return None
    prefix, dash, kind = tag.partition("-")
    if dash and kind and prefix in PREFIXES[scheme]:
        return None
    return f"tag {tag!r} is not a {scheme} tag (expected O or {'/'.join(PREFIXES[scheme])}-TYPE)"


def iob1_to_bio(tags: Sequence[str]) -> list[str]:
    """IOB1 uses B only between two adjacent spans of one type; BIO begins every span with B."""
    converted, previous = [], "O"
    for tag in tags:
        prefix, _, kind = tag.partition("-")
        starts = prefix == "I" and (previous == "O" or previous.partition("-")[2] != kind)
        converted.append(f"B-{kind}" if starts else tag)
        previous = tag
    return converted


def bio_to_bioul(tags: Sequence[str]) -> list[str]:
    """A one-token span becomes U, a span's last token L."""
    converted = []
    for position, tag in enumerate(tags):
        if tag == "O":
            converted.append(tag)
            continue
        prefix, _, kind = tag.partition("-")
        following = tags[position + 1] if position + 1 < len(tags) else "O"
        continues = following == f"I-{kind}"
        if prefix == "B":
            converted.append(tag if continues else f"U-{kind}")
        else:
            converted.append(tag if continues else f"L-{kind}")
    return converted


def convert(tags: Sequence[str], source: str, target: str | None) -> list[str]:
    """``tags`` in ``source`` (IOB1 or BIO) as ``target`` (BIO or BIOUL; None keeps them)."""
    if target is None or target == source:
        return list(tags)
    bio = iob1_to_bio(tags) if source == "IOB1" else list(tags)
    return bio_to_bioul(bio) if target == "BIOUL" else bio
