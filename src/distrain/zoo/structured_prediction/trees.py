"""Constituency trees in the Penn Treebank's bracketed form, ``(S (NP (DT the) (NN dog)) (VP (VBD barked)))``,
read as AllenNLP read them (through nltk's ``BracketParseCorpusReader``), without nltk.

A file holds one tree per block; a block starts at each line that begins with ``(`` (an indented line continues the
tree above it), as nltk's ``unindented_paren`` blocks; text before the first tree is skipped. Each block is
normalised as nltk does (``(X)`` is ``(X X)``, ``(A B C)`` keeps ``(A B)``), and an empty top bracket around one
tree, ``( (S ...) )``, is dropped. Where nltk "recovered" from a malformed tree (adding close brackets, or a flat
parse), this module refuses it: :class:`TreeError` gives the line of the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Union

#: nltk's tokens: an open bracket with its label, a close bracket, or a leaf (a backslash escapes a bracket)
_CHARACTER = r"(?:\\[()]|[^\s()])"
_TOKENS = re.compile(rf"\(\s*({_CHARACTER}+)?|\)|({_CHARACTER}+)")
_ONE_CHARACTER = re.compile(r"\((.)\)")
_THREE_ITEMS = re.compile(r"\(([^\s()]+) ([^\s()]+) [^\s()]+\)")


class TreeError(ValueError):
    """A bracketed tree that cannot be read; ``offset`` is where in its text."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


@dataclass
class Tree:
    """A labelled node over subtrees and words (``str`` children), as nltk's ``Tree``."""

    label: str
    children: list[Union["Tree", str]] = field(default_factory=list)

    def leaves(self) -> list[str]:
        return [leaf for child in self.children
                for leaf in ([child] if isinstance(child, str) else child.leaves())]

    def pos(self) -> list[tuple[str, str]]:
        """``(word, tag)`` for each word: the label of the node right above it (nltk's ``pos()``)."""
        return [pair for child in self.children
                for pair in ([(child, self.label)] if isinstance(child, str) else child.pos())]

    def __str__(self) -> str:
        """One line, as nltk's ``pformat`` with an unbounded margin (what AllenNLP gave EVALB)."""
        return "(" + self.label + " " + " ".join(map(str, self.children)) + ")"


def parse_tree(text: str) -> Tree:
    """One bracketed tree (nltk's ``Tree.fromstring``); :class:`TreeError` where it is not one."""
    stack: list[tuple[str | None, list]] = [(None, [])]
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[0] == "(":
            if len(stack) == 1 and stack[0][1]:
                raise TreeError("a second tree starts after the first ended", match.start())
            stack.append((match.group(1) or "", []))
        elif token == ")":
            if len(stack) == 1:
                raise TreeError("a close bracket with no open one", match.start())
            label, children = stack.pop()
            stack[-1][1].append(Tree(label, children))
        else:
            if len(stack) == 1:
                raise TreeError(f"word {token!r} outside any bracket", match.start())
            stack[-1][1].append(token)
    if len(stack) > 1:
        raise TreeError(f"{len(stack) - 1} bracket(s) left open", len(text.rstrip()))
    if not stack[0][1]:
        raise TreeError("no tree", 0)
    return stack[0][1][0]


def normalise(text: str) -> str:
    """nltk's ``BracketParseCorpusReader._normalize``: ``(X)`` → ``(X X)``; ``(A B C)`` → ``(A B)``."""
    return _THREE_ITEMS.sub(r"(\1 \2)", _ONE_CHARACTER.sub(r"(\1 \1)", text))


def read_blocks(path: str | Path) -> Iterator[tuple[int, str]]:
    """Each tree's text with the number of its first line: a block starts at every line beginning with ``(``."""
    start, lines = 0, []
    with open(path, encoding="utf-8") as stream:
        for number, line in enumerate(stream, start=1):
            if line.startswith("("):
                if lines:
                    yield start, "".join(lines)
                start, lines = number, [line]
            elif lines:
                lines.append(line)
    if lines:
        yield start, "".join(lines)


def read_trees(path: str | Path) -> Iterator[tuple[int, Tree]]:
    """Each tree of a bracketed file with its first line; ``ValueError("file:line: problem")`` for a bad one."""
    for first_line, block in read_blocks(path):
        text = normalise(block)
        try:
            tree = parse_tree(text)
        except TreeError as error:
            # the normalisations never add or remove a line break, so the line is the block's first plus those before
            line = first_line + text.count("\n", 0, error.offset)
            raise ValueError(f"{path}:{line}: {error}") from None
        if tree.label == "" and len(tree.children) == 1 and isinstance(tree.children[0], Tree):
            tree = tree.children[0]
        yield first_line, tree
