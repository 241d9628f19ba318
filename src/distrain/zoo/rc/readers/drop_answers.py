"""How the ``drop`` reader turns a DROP answer into the ways a model may arrive at it (AllenNLP's rules, so a model
trained here marginalises over the same possibilities): the passage's and question's token spans that read as an
answer text, the signed pairs of passage numbers that add up to it, and the counts 0-9 that equal it.

Tokens are also split at hyphens first (``-``, ``–``, ``~``), as AllenNLP's DROP and QuAC readers do, so that
"10-yard" offers the number 10.
"""

from __future__ import annotations

import itertools
import string
from collections import defaultdict
from typing import Any, Sequence

from distrain.data.tokenizer import Token

#: the number words AllenNLP's DROP reader reads as numbers (nothing past nineteen, no "hundred")
WORD_NUMBERS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split())}
#: what an answer span may skip over between its words, and what is stripped from both ends of a word
IGNORED_TOKENS = {"a", "an", "the"}
STRIPPED_CHARACTERS = string.punctuation + "‘’´`_"
HYPHENS = ("-", "–", "~")
#: the counts the counting ability can answer
COUNTS = tuple(range(10))


def word_to_number(word: str) -> int | None:
    """``word`` as an int (commas dropped; "seven" is 7), or None: AllenNLP's default, integers only."""
    bare = word.replace(",", "")
    if bare in WORD_NUMBERS:
        return WORD_NUMBERS[bare]
    try:
        return int(bare)
    except ValueError:
        return None


def _split_at(token: Any, delimiter: str) -> list[Token]:
    """``token`` cut at each ``delimiter``, the delimiters kept as tokens of their own, offsets carried along."""
    pieces: list[Token] = []
    offset = token.idx
    for part in token.text.split(delimiter):
        if part:
            pieces.append(Token(part, offset))
            offset += len(part)
        pieces.append(Token(delimiter, offset))
        offset += len(delimiter)
    return pieces[:-1] if pieces else [token]


def split_tokens_by_hyphen(tokens: Sequence[Any]) -> list[Any]:
    """Each token holding a hyphen cut into its parts and hyphens, one hyphen kind after the other. Which kinds
    apply is decided by the original token's text, and a token cut by one kind is a new :class:`Token` (text and
    offset only), as in AllenNLP."""
    split: list[Any] = []
    for token in tokens:
        if not any(hyphen in token.text for hyphen in HYPHENS):
            split.append(token)
            continue
        pieces = [token]
        for hyphen in HYPHENS:
            if hyphen in token.text:
                pieces = [piece for whole in pieces for piece in _split_at(whole, hyphen)]
        split += pieces
    return split


def answer_type_and_texts(annotation: dict) -> tuple[str | None, list[str]]:
    """An annotation's kind (``spans``, ``number``, ``date``; None when it is empty) and its texts: the spans, the
    number, or the date's month, day and year that are given."""
    if annotation.get("spans"):
        return "spans", list(annotation["spans"])
    if annotation.get("number"):
        return "number", [annotation["number"]]
    date = annotation.get("date") or {}
    if any(date.values()):
        return "date", [date[key] for key in ("month", "day", "year") if date.get(key)]
    return None, []


def find_valid_spans(tokens: Sequence[Any], answer_texts: Sequence[str]) -> list[tuple[int, int]]:
    """Every inclusive token span reading as one of ``answer_texts`` (each a tokenized answer, its tokens joined by
    spaces): case and surrounding punctuation ignored, articles inside a span skipped."""
    normalized = [token.text.lower().strip(STRIPPED_CHARACTERS) for token in tokens]
    positions: dict[str, list[int]] = defaultdict(list)
    for position, word in enumerate(normalized):
        positions[word].append(position)
    spans = []
    for text in answer_texts:
        words = text.lower().strip(STRIPPED_CHARACTERS).split()
        if not words:
            continue  # nothing to find (AllenNLP fails on such an answer)
        for start in positions.get(words[0], ()):
            end, matched = start, 1
            while matched < len(words) and end + 1 < len(normalized):
                following = normalized[end + 1]
                if words[matched].strip(STRIPPED_CHARACTERS) == following:
                    matched += 1
                    end += 1
                elif following in IGNORED_TOKENS:
                    end += 1
                else:
                    break
            if matched == len(words):
                spans.append((start, end))
    return spans


def find_valid_add_sub_expressions(numbers: Sequence[int], targets: Sequence[int],
                                   max_numbers: int = 2) -> list[list[int]]:
    """Each signed pair of ``numbers`` (by position) whose sum is a target, as one label per number: 0 left out,
    1 added, 2 subtracted. Pairs in the order of ``itertools.combinations``, signs (-, -), (-, +), (+, -), (+, +)."""
    expressions = []
    for size in range(2, max_numbers + 1):
        sign_choices = list(itertools.product((-1, 1), repeat=size))
        for chosen in itertools.combinations(enumerate(numbers), size):
            for signs in sign_choices:
                if sum(sign * value for sign, (_, value) in zip(signs, chosen)) in targets:
                    labels = [0] * len(numbers)
                    for sign, (position, _) in zip(signs, chosen):
                        labels[position] = 1 if sign == 1 else 2
                    expressions.append(labels)
    return expressions


def find_valid_counts(targets: Sequence[int]) -> list[int]:
    """The counts 0-9 that are a target."""
    return [count for count in COUNTS if count in targets]
