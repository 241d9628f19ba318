"""Sentences, one per line, for language modelling (AllenNLP's ``simple_language_modeling``): each line tokenized,
``start_tokens`` and ``end_tokens`` around it, in one text field ``source``; a sentence longer than
``max_sequence_length`` tokens (counting those added) is dropped, as in AllenNLP. Blank lines are skipped (AllenNLP
made each an instance of the added tokens alone)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator

from distrain.config.constraints import PositiveInt
from distrain.data.fields import TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer

logger = logging.getLogger(__name__)


@DatasetReader.register("simple_language_modeling")
class SimpleLanguageModelingReader(DatasetReader):
    """Reads only its share of the lines (distributed-aware); the tokenizer is spaCy's unless given."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 max_sequence_length: PositiveInt | None = None, start_tokens: list[str] | None = None,
                 end_tokens: list[str] | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or SpacyTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.max_sequence_length = max_sequence_length
        self.start_tokens = list(start_tokens or [])
        self.end_tokens = list(end_tokens or [])

    @classmethod
    def declared_fields(cls, arguments):
        return {"source": True}

    def input_fields(self) -> dict[str, str]:
        return {"sentence": "text"}

    def record_to_instance(self, record: dict) -> dict:
        return self.text_to_instance(self.require(record, "sentence", str, "a string"))

    def _read(self, path: Path) -> Iterator[dict]:
        dropped = 0
        for _, line in self.owned_lines(path):
            self.num_parsed += 1
            instance = self.text_to_instance(line)
            if self.max_sequence_length is not None and len(instance["source"].tokens) > self.max_sequence_length:
                dropped += 1
                continue
            yield instance
        if dropped:
            logger.warning("%s: dropped %d sentence(s) longer than %d tokens", path, dropped, self.max_sequence_length)

    def text_to_instance(self, sentence: str) -> dict:
        tokens = ([Token(text) for text in self.start_tokens] + list(self.tokenizer.tokenize(sentence))
                  + [Token(text) for text in self.end_tokens])
        return {"source": TextField(tokens, self.token_indexers)}
