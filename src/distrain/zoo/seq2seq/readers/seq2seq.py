"""AllenNLP's ``seq2seq`` reader: one source and one target sequence a row of a tsv (or csv) file.

Each row is parsed by :mod:`csv` with the configured ``delimiter`` and ``quoting`` (a csv module constant,
``0`` = ``QUOTE_MINIMAL`` by default), so a quoted field may hold the delimiter. A row with an empty side is
skipped; a row without exactly two fields is reported by file:line. Both sides get ``start_symbol`` and
``end_symbol`` unless told otherwise, after being cut to ``*_max_tokens``. Rows are dealt to the readers of a
distributed run before they are tokenized.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path
from typing import Any, Iterator, Mapping

from distrain.config.constraints import PositiveInt
from distrain.config.errors import Problem
from distrain.data.fields import TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer
from distrain.zoo.seq2seq.readers.source_target_records import SourceTargetRecords

logger = logging.getLogger(__name__)

START_SYMBOL = "@start@"
END_SYMBOL = "@end@"
#: the csv module's quoting constants, by value
QUOTINGS = (csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC, csv.QUOTE_NONE)


def bounded(tokens: list[Any], start: str | None, end: str | None) -> list[Any]:
    """``tokens`` with a fresh ``start`` token before and ``end`` token after (each where given)."""
    return ([Token(start)] if start else []) + list(tokens) + ([Token(end)] if end else [])


@DatasetReader.register("seq2seq")
class Seq2SeqDatasetReader(SourceTargetRecords, DatasetReader):
    """Instances ``source_tokens`` and (where the row has one) ``target_tokens``; the target side uses the
    source's tokenizer and indexers unless given its own."""

    distributed_aware = True

    def __init__(self, source_tokenizer: Tokenizer | None = None, target_tokenizer: Tokenizer | None = None,
                 source_token_indexers: dict[str, TokenIndexer] | None = None,
                 target_token_indexers: dict[str, TokenIndexer] | None = None,
                 source_add_start_token: bool = True, source_add_end_token: bool = True,
                 target_add_start_token: bool = True, target_add_end_token: bool = True,
                 start_symbol: str = START_SYMBOL, end_symbol: str = END_SYMBOL, delimiter: str = "\t",
                 source_max_tokens: PositiveInt | None = None, target_max_tokens: PositiveInt | None = None,
                 quoting: int = csv.QUOTE_MINIMAL, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.source_tokenizer = source_tokenizer or SpacyTokenizer()
        self.target_tokenizer = target_tokenizer or self.source_tokenizer
        self.source_token_indexers = source_token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.target_token_indexers = target_token_indexers or self.source_token_indexers
        self.source_bounds = (start_symbol if source_add_start_token else None,
                              end_symbol if source_add_end_token else None)
        self.target_bounds = (start_symbol if target_add_start_token else None,
                              end_symbol if target_add_end_token else None)
        self.delimiter, self.quoting = delimiter, quoting  # the csv module's, for each line
        self.source_max_tokens, self.target_max_tokens = source_max_tokens, target_max_tokens

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        problems = []
        if arguments.get("quoting", csv.QUOTE_MINIMAL) not in QUOTINGS:
            problems.append(Problem("quoting", f"must be one of the csv module's constants {QUOTINGS}"))
        delimiter = arguments.get("delimiter", "\t")
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            problems.append(Problem("delimiter", "must be a single character"))
        return problems

    @classmethod
    def declared_fields(cls, arguments: Mapping[str, Any]) -> dict[str, bool]:
        return {"source_tokens": True, "target_tokens": False}

    def _read(self, path: Path) -> Iterator[dict]:
        truncated = {"source": 0, "target": 0}
        with open(path, encoding="utf-8", newline="") as rows:
            parsed = csv.reader(rows, delimiter=self.delimiter, quoting=self.quoting)
            for row in self.shard_iterable(parsed):
                line = parsed.line_num
                self.num_parsed += 1
                if len(row) != 2:
                    self.invalid(path, line, f"expected a source and a target separated by {self.delimiter!r}, "
                                             f"got {len(row)} field(s)")
                    continue
                source, target = row
                if not source or not target:
                    continue
                yield self._instance(source, target, truncated)
        for side, count in truncated.items():
            if count:
                logger.info("%s: %d %s sequence(s) cut to %d tokens", path, count, side,
                            getattr(self, f"{side}_max_tokens"))

    def text_to_instance(self, source_string: str, target_string: str | None = None) -> dict:
        return self._instance(source_string, target_string, {"source": 0, "target": 0})

    def _instance(self, source: str, target: str | None, truncated: dict[str, int]) -> dict:
        instance = {"source_tokens": self._field(source, "source", truncated)}
        if target is not None:
            instance["target_tokens"] = self._field(target, "target", truncated)
        return instance

    def _field(self, text: str, side: str, truncated: dict[str, int]) -> TextField:
        tokens = getattr(self, f"{side}_tokenizer").tokens(text)
        limit = getattr(self, f"{side}_max_tokens")
        if limit and len(tokens) > limit:
            truncated[side] += 1
            tokens = tokens[:limit]
        return TextField(bounded(tokens, *getattr(self, f"{side}_bounds")),
                         getattr(self, f"{side}_token_indexers"))

