"""AllenNLP's ``copynet_seq2seq`` reader: tab-separated source and target lines for CopyNet (Gu et al. 2016).

Besides the two text fields (the target between ``@start@`` and ``@end@``, indexed by words in
``target_namespace``; the source as its indexers say, without boundary symbols) an instance holds what copying
needs: ``source_to_target``, each source token's id in the target vocabulary (the OOV id where it has none;
this does not add source words to the target vocabulary), and ``source_token_ids`` / ``target_token_ids``,
each token numbered by its first appearance in source-then-target, so equal words share a number whether or
not the vocabulary knows them. ``metadata`` keeps the source words (a copied position decodes to its word) and
the target's. Lines are dealt to a distributed run's readers before they are tokenized.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from distrain.data.fields import Field, MetadataField, TensorField, TextField, TokenIdsField
from distrain.data.reader import DatasetReader, RecordError
from distrain.data.token_indexer import TokenIndexer, token_text
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer
from distrain.zoo.seq2seq.readers.seq2seq import END_SYMBOL, START_SYMBOL

logger = logging.getLogger(__name__)


class NamespaceSwappingField(Field):
    """Tokens indexed in another namespace than their own field's (the source's words as target ids, the unknown
    ones as its OOV id), counting nothing into the vocabulary: one ``(batch, length)`` tensor of ids, padded with 0,
    as AllenNLP's field of that name gives."""

    column_kind = "ragged"

    def __init__(self, words: list[str], namespace: str) -> None:
        self.words = list(words)
        self.namespace = namespace

    def index(self, vocab: Any) -> np.ndarray:
        return np.asarray(vocab.token_indices(self.words, self.namespace), dtype=np.int64)

    def length(self) -> int:
        return len(self.words)

    def __len__(self) -> int:
        return len(self.words)


def first_appearance_ids(words: list[str]) -> list[int]:
    """Each word's number: how many distinct words came before its first appearance."""
    numbers: dict[str, int] = {}
    return [numbers.setdefault(word, len(numbers)) for word in words]


@DatasetReader.register("copynet_seq2seq")
class CopyNetDatasetReader(DatasetReader):
    """Tab-separated source and target lines, with what CopyNet copies from: the source's tokens numbered by
    first appearance and mapped to target ids."""

    distributed_aware = True

    def __init__(self, target_namespace: str, source_tokenizer: Tokenizer | None = None,
                 target_tokenizer: Tokenizer | None = None,
                 source_token_indexers: dict[str, TokenIndexer] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_namespace = target_namespace
        self.source_tokenizer = source_tokenizer or SpacyTokenizer()
        self.target_tokenizer = target_tokenizer or self.source_tokenizer
        self.source_token_indexers = source_token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.target_token_indexers = {"tokens": SingleIdTokenIndexer(namespace=target_namespace)}
        if isinstance(self.target_tokenizer, PretrainedTransformerTokenizer) and \
                self.target_tokenizer.add_special_tokens:
            warnings.warn("'add_special_tokens' is True for target_tokenizer, a pretrained_transformer tokenizer: "
                          "its special tokens ([CLS], [SEP]) will probably end up in the predicted target "
                          "sequences; set 'add_special_tokens: false' for the target_tokenizer if that is not "
                          "what you intended", UserWarning)

    @classmethod
    def declared_fields(cls, arguments: Mapping[str, Any]) -> dict[str, bool]:
        return {"source_tokens": True, "source_to_target": True, "source_token_ids": True, "metadata": True,
                "target_tokens": False, "target_token_ids": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for number, line in self.owned_lines(path):
            line = line.rstrip("\n")
            parts = line.split("\t")
            self.num_parsed += 1
            if len(parts) != 2:
                self.invalid(path, number, f"expected a source and a target separated by a tab, got {len(parts)} "
                                           "field(s)")
                continue
            source, target = parts
            if not source:
                continue
            try:
                yield self.text_to_instance(source, target)
            except ValueError as error:
                self.invalid(path, number, str(error))

    def text_to_instance(self, source_string: str, target_string: str | None = None,
                         weight: float | None = None) -> dict:
        source = self.source_tokenizer.tokens(source_string)
        if not source:
            raise ValueError(f"the source tokenizer made no tokens of {source_string!r}")
        source_words = [token_text(token) for token in source]
        instance: dict[str, Any] = {
            "source_tokens": TextField(source, self.source_token_indexers),
            "source_to_target": NamespaceSwappingField(source_words, namespace=self.target_namespace),
        }
        metadata: dict[str, Any] = {"source_tokens": source_words}
        if target_string is not None:
            # plain words: a pretrained tokenizer's own ids are not target-vocabulary ids
            target_words = [START_SYMBOL, *(token_text(t) for t in self.target_tokenizer.tokens(target_string)),
                            END_SYMBOL]
            instance["target_tokens"] = TextField([Token(word) for word in target_words], self.target_token_indexers)
            metadata["target_tokens"] = target_words[1:-1]
            numbered = first_appearance_ids(source_words + target_words)
            instance["source_token_ids"] = TokenIdsField(numbered[: len(source_words)])
            instance["target_token_ids"] = TokenIdsField(numbered[len(source_words):])
        else:
            instance["source_token_ids"] = TokenIdsField(first_appearance_ids(source_words))
        instance["metadata"] = MetadataField(metadata)
        if weight is not None:
            instance["weight"] = TensorField(float(weight))
        return instance

    def record_to_instance(self, record: dict) -> dict:
        """A JSON record ``{"source": ...}`` (AllenNLP's seq2seq predictor's key), with an optional ``target``."""
        source = self.require(record, "source", str, "a string")
        target = self.require(record, "target", str, "a string") if "target" in record else None
        try:
            return self.text_to_instance(source, target)
        except ValueError as error:
            raise RecordError(str(error), "source") from None

    def input_fields(self) -> dict[str, str]:
        return {"source": "text"}
