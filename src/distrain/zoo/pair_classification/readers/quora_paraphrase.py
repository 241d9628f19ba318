"""Quora Question Pairs as split by Wang et al. 2017 (AllenNLP's ``quora_paraphrase``): tab-separated rows
``is_duplicate question1 question2 id``, no header, the questions already tokenized with spaces.

As in AllenNLP, the questions become ``premise`` and ``hypothesis`` (so models for NLI read them) and a row
without four columns is skipped. With a pretrained tokenizer, which must not add special tokens itself, the
pair is one ``tokens`` field in the tokenizer's pair template (``combine_input_fields``, the default there).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import LabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.zoo.pair_classification.readers.snli import pair_text_fields
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer

COLUMNS = 4


@DatasetReader.register("quora_paraphrase")
class QuoraParaphraseDatasetReader(DatasetReader):
    """Reads only its share of the rows (distributed-aware). The default tokenizer is AllenNLP's
    whitespace one (``just_spaces``)."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 combine_input_fields: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        pretrained = isinstance(self.tokenizer, PretrainedTransformerTokenizer)
        if pretrained and self.tokenizer.adds_special_tokens:
            raise ValueError("the pretrained_transformer tokenizer must have add_special_tokens: false "
                             "(the reader adds them around the pair)")
        self.combine_input_fields = pretrained if combine_input_fields is None else combine_input_fields

    @classmethod
    def declared_fields(cls, arguments):
        return {**pair_text_fields(arguments), "label": False}

    def _read(self, path: Path) -> Iterator[dict]:
        with open(path, encoding="utf-8", newline="") as lines:
            for row in self.shard_iterable(csv.reader(lines, delimiter="\t")):
                self.num_parsed += 1
                if len(row) == COLUMNS:
                    yield self.text_to_instance(row[1], row[2], row[0])

    def text_to_instance(self, premise: str, hypothesis: str, label: str | None = None) -> dict:
        premise_tokens, hypothesis_tokens = self.tokenizer.tokens(premise), self.tokenizer.tokens(hypothesis)
        if self.combine_input_fields:
            instance: dict = {"tokens": TextField(
                self.tokenizer.with_special_tokens(premise_tokens, hypothesis_tokens), self.token_indexers)}
        else:
            instance = {"premise": TextField(self.tokenizer.with_special_tokens(premise_tokens), self.token_indexers),
                        "hypothesis": TextField(self.tokenizer.with_special_tokens(hypothesis_tokens),
                                                self.token_indexers)}
        if label is not None:
            instance["label"] = LabelField(label)
        return instance
