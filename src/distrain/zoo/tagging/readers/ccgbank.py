"""CCGbank's machine-readable derivations (AllenNLP's ``ccgbank``): one derivation a line, whose leaves
``(<L category modified_pos original_pos word predicate_arg>)`` give a sentence's words and their tags.

``tag_label`` picks the leaf column that becomes ``tags`` (``ccg`` by default); ``feature_labels`` add others as
``ccg_tags``, ``modified_pos_tags``, ``original_pos_tags``, ``predicate_arg_tags``, each in its own namespace. A
leaf's parts after the fifth (PropBank annotations, in some releases) are not read, as AllenNLP reads none. The
``ID=`` lines between derivations are skipped; a leaf with fewer than five parts is named by file:line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from distrain.data.fields import TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token
from distrain.zoo.tagging.readers.tag_fields import declared_tag_fields, tag_fields

Label = Literal["ccg", "modified_pos", "original_pos", "predicate_arg"]
#: a leaf's parts, in the file's order (the word is the fourth)
LEAF = ("ccg", "modified_pos", "original_pos", "word", "predicate_arg")
LEAVES = re.compile(r"<L (.*?)>")


@DatasetReader.register("ccgbank")
class CcgBankDatasetReader(DatasetReader):
    """Reads only its share of the derivations (distributed-aware)."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, tag_label: Label = "ccg",
                 feature_labels: Sequence[Label] = (), label_namespace: str = "labels", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.tag_label = tag_label
        self.feature_labels = set(feature_labels)
        self.label_namespace = label_namespace

    @classmethod
    def declared_fields(cls, arguments):
        return declared_tag_fields(arguments, metadata=False)

    def _derivations(self, path: Path) -> Iterator[tuple[int, str]]:
        with open(path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if line.startswith("(<"):
                    yield number, line

    def _read(self, path: Path) -> Iterator[dict]:
        for number, line in self.shard_iterable(self._derivations(path)):
            self.num_parsed += 1
            leaves = [leaf.split()[:len(LEAF)] for leaf in LEAVES.findall(line)]
            if not leaves or any(len(leaf) < len(LEAF) for leaf in leaves):
                self.invalid(path, number, f"expected leaves (<L {' '.join(LEAF)}>) of at least {len(LEAF)} parts")
                continue
            columns = dict(zip(LEAF, (list(column) for column in zip(*leaves))))
            yield self.text_to_instance(columns.pop("word"), **{f"{name}_tags": tags for name, tags in columns.items()})

    def text_to_instance(self, tokens: list[str], ccg_tags: list[str] | None = None,
                         modified_pos_tags: list[str] | None = None, original_pos_tags: list[str] | None = None,
                         predicate_arg_tags: list[str] | None = None) -> dict:
        text = TextField([Token(word) for word in tokens], self.token_indexers)
        tags = {"ccg": ccg_tags, "modified_pos": modified_pos_tags, "original_pos": original_pos_tags,
                "predicate_arg": predicate_arg_tags}
        return {"tokens": text, **tag_fields(text, tags, self.tag_label, self.feature_labels, self.label_namespace,
                                             "ccgbank")}
