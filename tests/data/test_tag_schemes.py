"""Tag-scheme conversion keeps the entities: IOB1 tags converted to BIO and to BIOUL give the spans seqeval
reads from the IOB1 original (conlleval's rules), on random tag sequences; a tag outside its scheme is named."""

from __future__ import annotations

import random

from seqeval.metrics.sequence_labeling import get_entities

from distrain.zoo.tagging.readers.tag_schemes import convert, scheme_problem


def random_iob1(rng: random.Random, length: int) -> list[str]:
    """Legal IOB1: B only right after a token of the same type."""
    tags: list[str] = []
    for _ in range(length):
        kind = rng.choice(["O", "PER", "LOC"])
        if kind == "O":
            tags.append("O")
        elif tags and tags[-1] != "O" and tags[-1][2:] == kind and rng.random() < 0.5:
            tags.append(f"B-{kind}")
        else:
            tags.append(f"I-{kind}")
    return tags


def test_converted_tags_keep_seqevals_entities():
    rng = random.Random(3)
    for _ in range(300):
        tags = random_iob1(rng, rng.randint(1, 9))
        expected = get_entities(tags)
        bio = convert(tags, "IOB1", "BIO")
        bioul = convert(tags, "IOB1", "BIOUL")
        assert all(t == "O" or t[0] in "BI" for t in bio) and get_entities(bio) == expected
        assert get_entities([{"L": "E", "U": "S"}.get(t[0], t[0]) + t[1:] for t in bioul]) == expected
        for tag, following in zip(bioul, bioul[1:] + ["O"]):  # a BIOUL span goes on after B and I
            if tag[0] in "BI":
                assert following in (f"I-{tag[2:]}", f"L-{tag[2:]}"), bioul
        assert convert(bio, "BIO", "BIOUL") == bioul


def test_a_tag_outside_the_scheme_is_named():
    assert scheme_problem("I-PER", "IOB1") is None and scheme_problem("O", "BIO") is None
    assert scheme_problem("U-PER", "BIO") == "tag 'U-PER' is not a BIO tag (expected O or B/I-TYPE)"
    assert scheme_problem("PER", "BIOUL") == "tag 'PER' is not a BIOUL tag (expected O or B/I/L/U-TYPE)"
