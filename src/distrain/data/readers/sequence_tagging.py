"""One tagged sentence per line, ``word###tag`` tokens (AllenNLP's ``sequence_tagging``): the simplest
format for any tagger; ``word_tag_delimiter`` and ``token_delimiter`` change the separators."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token


@DatasetReader.register("sequence_tagging")
class SequenceTaggingDatasetReader(DatasetReader):
    """Reads only its share of the lines (distributed-aware); a token without the delimiter is named by
    file:line. The word is what precedes the *last* delimiter, so words may contain it."""

    distributed_aware = True

    def __init__(self, word_tag_delimiter: str = "###", token_delimiter: str | None = None,
                 token_indexers: dict[str, TokenIndexer] | None = None, label_namespace: str = "labels",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.word_tag_delimiter = word_tag_delimiter
        self.token_delimiter = token_delimiter
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.label_namespace = label_namespace

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "metadata": True, "tags": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for number, line in self.owned_lines(path):
            self.num_parsed += 1
            pairs = [token.rsplit(self.word_tag_delimiter, 1) for token in line.strip("\n").split(self.token_delimiter)]
            bad = next((pair[0] for pair in pairs if len(pair) != 2), None)
            if bad is not None:
                self.invalid(path, number, f"token {bad!r} has no {self.word_tag_delimiter!r} between word and tag")
                continue
            yield self.text_to_instance([Token(word) for word, _ in pairs], [tag for _, tag in pairs])

    def text_to_instance(self, tokens: list[Token], tags: list[str] | None = None) -> dict:
        text = TextField(tokens, self.token_indexers)
        instance: dict = {"tokens": text, "metadata": MetadataField({"words": [t.text for t in tokens]})}
        if tags is not None:
            instance["tags"] = SequenceLabelField(tags, text, label_namespace=self.label_namespace)
        return instance
