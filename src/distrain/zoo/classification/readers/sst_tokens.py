"""The Stanford Sentiment Treebank's PTB trees, one per line (AllenNLP's ``sst_tokens``).

``(3 (2 It) (4 (2 's) (3 good)))``: the root's label is the sentence's sentiment (0-4), the leaves
are its tokens; with ``use_subtrees`` every phrase is an instance of its own. ``granularity`` folds
the five classes into three (0-1, 2, 3-4) or two (0-1, 3-4; neutral phrases dropped).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator, Literal

from distrain.data.fields import LabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Tokenizer

_PARTS = re.compile(r"\(|\)|[^\s()]+")


def parse_tree(line: str) -> tuple[str, list]:
    """``(label child ...)`` as ``(label, children)``, a leaf child as its string; ValueError if malformed."""
    parts = _PARTS.findall(line)
    stack: list[tuple[str, list]] = []
    root = None
    for position, part in enumerate(parts):
        if part == "(":
            if position + 1 >= len(parts) or parts[position + 1] in "()":
                raise ValueError("a bracket without a label")
            stack.append(("", []))
        elif part == ")":
            if not stack:
                raise ValueError("unbalanced ')'")
            node = stack.pop()
            if stack:
                stack[-1][1].append(node)
            elif root is None:
                root = node
            else:
                raise ValueError("more than one tree on the line")
        elif stack and not stack[-1][0] and not stack[-1][1]:
            stack[-1] = (part, [])
        elif stack:
            stack[-1][1].append(part)
        else:
            raise ValueError(f"text outside the tree: {part!r}")
    if stack or root is None:
        raise ValueError("unbalanced '('")
    return root


def leaves(tree: tuple[str, list] | str) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    return [leaf for child in tree[1] for leaf in leaves(child)]


def subtrees(tree: tuple[str, list]) -> Iterator[tuple[str, list]]:
    yield tree
    for child in tree[1]:
        if not isinstance(child, str):
            yield from subtrees(child)


_FOLDS = {"5-class": {}, "3-class": {"0": "0", "1": "0", "2": "1", "3": "2", "4": "2"},
          "2-class": {"0": "0", "1": "0", "2": None, "3": "1", "4": "1"}}


@DatasetReader.register("sst_tokens")
class StanfordSentimentTreeBankReader(DatasetReader):
    """Reads only its share of the lines (distributed-aware); a malformed tree is named by file:line."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, tokenizer: Tokenizer | None = None,
                 use_subtrees: bool = False, granularity: Literal["5-class", "3-class", "2-class"] = "5-class",
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.tokenizer = tokenizer
        self.use_subtrees = use_subtrees
        self.granularity = granularity

    def _read(self, path: Path) -> Iterator[dict]:
        for number, line in self.owned_lines(path):
            self.num_parsed += 1
            try:
                tree = parse_tree(line)
            except ValueError as error:
                self.invalid(path, number, f"not a sentiment tree: {error}")
                continue
            for phrase in subtrees(tree) if self.use_subtrees else [tree]:
                instance = self.text_to_instance(leaves(phrase), phrase[0])
                if instance is not None:
                    yield instance

    def text_to_instance(self, tokens: list[str], sentiment: str | None = None) -> dict | None:
        """None for a neutral phrase under ``2-class`` (it has no label there)."""
        if self.tokenizer is not None:
            tokens = self.tokenizer.tokenize(" ".join(tokens))
        instance = {"tokens": TextField(tokens, self.token_indexers)}
        if sentiment is not None:
            label = _FOLDS[self.granularity].get(sentiment, sentiment)
            if label is None:
                return None
            instance["label"] = LabelField(label)
        return instance
