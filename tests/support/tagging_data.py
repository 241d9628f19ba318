"""Small tagging data the tests write, in CoNLL 2003's and ``word###tag`` formats: made-up sentences with
people, places and organisations (one or two words each), tagged IOB1 as CoNLL ships. Not a benchmark:
no labelled tagging data ships in any installed package (see docs/how-to/tagging-pairs.md)."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

ENTITIES = {"PER": [["alice"], ["bob", "smith"], ["carol"], ["dan", "brown"]],
            "LOC": [["paris"], ["new", "york"], ["berlin"], ["rome"]],
            "ORG": [["acme"], ["red", "cross"], ["nasa"]]}
#: more distinct words than characters, as real CoNLL data has (tests/allennlp/test_allennlp_tagging_configs.py also
#: writes data with fewer, which sizes ner.jsonnet's character embedding by its own namespace all the same)
FILLER = ("the met in said visited from and with a today yesterday later after before near at on to of for "
          "by over under about against between into through during without within along across behind beyond "
          "talks meeting report news week year people group city country team").split()


def sentence(rng: random.Random) -> list[tuple[str, str]]:
    """(word, IOB1 tag) pairs; two adjacent entities of one type make IOB1's B appear."""
    words: list[tuple[str, str]] = []
    previous_kind = None
    for _ in range(rng.randint(2, 5)):
        if rng.random() < 0.45:
            kind = rng.choice(sorted(ENTITIES))
            name = rng.choice(ENTITIES[kind])
            first = "B" if previous_kind == kind else "I"
            words += [(word, f"{first if i == 0 else 'I'}-{kind}") for i, word in enumerate(name)]
            previous_kind = kind
        else:
            words.append((rng.choice(FILLER), "O"))
            previous_kind = None
    return words


def write_conll(path: Path, count: int, seed: int) -> Path:
    rng = random.Random(seed)
    lines = ["-DOCSTART- -X- -X- O", ""]
    for _ in range(count):
        for word, tag in sentence(rng):
            lines.append(f"{word.capitalize() if tag != 'O' else word} {'NNP' if tag != 'O' else 'NN'} "
                         f"{'I-NP' if tag != 'O' else 'O'} {tag}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_word_tags(path: Path, count: int, seed: int) -> Path:
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(" ".join(f"{w}###{t}" for w, t in sentence(rng)) + "\n" for _ in range(count)))
    return path


def write_vectors(path: Path, dim: int, words: list[str] | None = None) -> Path:
    """A GloVe-format file (gzipped) with a vector for each of ``words`` (default: every word the sentences use)."""
    words = words or FILLER + [word for names in ENTITIES.values() for name in names for word in name]
    with gzip.open(path, "wt") as vectors:
        for index, word in enumerate(words):
            vectors.write(word + "".join(f" {((index * 7 + d) % 11) / 10 - 0.5:.1f}" for d in range(dim)) + "\n")
    return path
