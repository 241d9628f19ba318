"""OntoNotes 5.0 named entities in the CoNLL-2012 format (AllenNLP's ``ontonotes_ner``): a folder of
``*gold_conll`` files (or one such file), each sentence a ``tokens`` field with its ``tags`` (BIO, or BIOUL
with ``coding_scheme``) and its words in the metadata.

``domain_identifier`` keeps only files under a folder of that name (``nw``, ``bc``, ...); the ``pt`` folder
(the Bible, without named entities) is always left out, as in AllenNLP. The escaped words ``/.`` and ``/?``
are read as ``.`` and ``?``. Files are read in sorted order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Literal

from distrain.zoo.common.conll2012 import gold_conll_files, sentences
from distrain.data.fields import MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DataError, DatasetReader
from distrain.zoo.tagging.readers.tag_schemes import convert
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token

ESCAPED = ("/.", "/?")


def normalize_word(word: str) -> str:
    return word[1:] if word in ESCAPED else word


@DatasetReader.register("ontonotes_ner")
class OntonotesNamedEntityRecognition(DatasetReader):
    """Reads only its share of the sentences (distributed-aware)."""

    distributed_aware = True

    def __init__(self, token_indexers: dict[str, TokenIndexer] | None = None, domain_identifier: str | None = None,
                 coding_scheme: Literal["BIO", "BIOUL"] = "BIO", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if domain_identifier == "pt":
            raise ValueError("OntoNotes 5.0 has no named entities in the old and new testament (pt)")
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.domain_identifier = domain_identifier
        self.coding_scheme = coding_scheme

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "metadata": True, "tags": False}

    def check_path(self, path: str | Path) -> None:
        if not self._files(Path(path)):
            raise DataError(f"no *gold_conll files found at {path}"
                            + (f" under a {self.domain_identifier}/ folder" if self.domain_identifier else ""))

    def _files(self, path: Path) -> list[Path]:
        files = [file for file in gold_conll_files(path) if "pt" not in file.parts[:-1]]
        if self.domain_identifier is not None:
            files = [file for file in files if self.domain_identifier in file.parts[:-1]]
        return files

    def _read(self, path: Path) -> Iterator[dict]:
        every = (sentence for file in self._files(path) for sentence in sentences(file))
        for sentence in self.shard_iterable(every):
            self.num_parsed += 1
            yield self.text_to_instance([Token(normalize_word(word)) for word in sentence.words],
                                        sentence.named_entities)

    def text_to_instance(self, tokens: list[Token], ner_tags: list[str] | None = None) -> dict:
        text = TextField(tokens, self.token_indexers)
        instance: dict = {"tokens": text, "metadata": MetadataField({"words": [token.text for token in tokens]})}
        if ner_tags is not None:
            instance["tags"] = SequenceLabelField(convert(ner_tags, "BIO", self.coding_scheme), text)
        return instance
