"""Multiple-choice data for ``transformer_mc`` (AllenNLP's ``piqa``, ``swag`` and ``commonsenseqa`` readers).

Each instance is one question: every choice paired with the question's start as ``[CLS] start [SEP] choice
[SEP]`` (the tokenizer's own pair layout), a ``(choices, tokens)`` array, as AllenNLP's ``ListField`` of
``TextField`` was. ``length_limit`` caps each pair as AllenNLP did: the start is cut to what the choice leaves;
a choice too long by itself keeps its beginning and no start.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.data.fields import ArrayField, LabelField, MetadataField
from distrain.data.reader import DataError, DatasetReader
from distrain.zoo.rc.readers.transformer_squad import PairLayout, TokenizerOnFirstUse
from distrain.pretrained import PretrainedName


class TransformerMCReader(TokenizerOnFirstUse, DatasetReader):
    """The shared part: ``text_to_instance(qid, start, alternatives, label)``; subclasses read a format.

    Fields: ``alternatives`` (token ids), ``alternative_type_ids``, ``alternative_mask`` (each ``(choices,
    tokens)``), ``correct_alternative`` (the right choice's index, when known) and ``qid``."""

    distributed_aware = True

    def __init__(self, transformer_model_name: PretrainedName = "roberta-large", length_limit: PositiveInt = 512,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.transformer_model_name = transformer_model_name
        self.length_limit = length_limit
        self._layout: PairLayout | None = None

    def tokenizer_loaded(self, tokenizer: Any) -> None:
        self._layout = PairLayout.of(tokenizer)

    @classmethod
    def declared_fields(cls, arguments: Any) -> dict[str, bool]:
        return {"alternatives": True, "alternative_type_ids": True, "alternative_mask": True,
                "correct_alternative": False, "qid": True}

    def record_to_instance(self, record: dict) -> dict:
        """One question for ``distrain serve``: ``{"prefix": "...", "alternatives": ["...", ...]}`` (AllenNLP's
        ``transformer_mc`` predictor's keys)."""
        prefix = self.require(record, "prefix", str, "a string")
        alternatives = self.require(record, "alternatives", list, "a list of strings")
        return self.text_to_instance(str(record.get("qid", "no_qid")), prefix, [str(a) for a in alternatives])

    def input_fields(self) -> dict[str, str]:
        return {"prefix": "text", "alternatives": "json"}

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def text_to_instance(self, qid: str, start: str, alternatives: list[str], label: int | None = None) -> dict:
        start_ids = self._ids(start)
        layout = self._layout
        ids, types = [], []
        for alternative in alternatives:
            choice = self._ids(alternative)
            room = self.length_limit - len(choice) - layout.special_count
            if room < 0:  # AllenNLP: the choice alone is too long; keep its beginning, no start
                choice, room = choice[:room], 0
            pair_ids, pair_types, _ = layout.pair(start_ids[:room], choice)
            ids.append(np.asarray(pair_ids, dtype=np.int64))
            types.append(np.asarray(pair_types, dtype=np.int64))
        return self.instance(qid, ids, types, label)

    def instance(self, qid: str, ids: list[np.ndarray], types: list[np.ndarray], label: int | None) -> dict:
        """The fields of one question from its pairs' token ids and type ids."""
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        instance = {
            "alternatives": ArrayField(ids, pad_value=pad, column_kind="nested"),
            "alternative_type_ids": ArrayField(types, column_kind="nested"),
            "alternative_mask": ArrayField([np.ones(len(row), dtype=np.int64) for row in ids], column_kind="nested"),
            "qid": MetadataField(qid),
        }
        if label is not None:
            if not 0 <= label < len(ids):
                raise DataError(f"question {qid}: alternative {label} does not exist ({len(ids)} given)")
            instance["correct_alternative"] = LabelField(label, skip_indexing=True)
        return instance


@DatasetReader.register("piqa")
class PiqaReader(TransformerMCReader):
    """PIQA: ``X.jsonl`` (``goal``, ``sol1``, ``sol2``) with its labels in ``X-labels.lst``, one per line; a
    question's id is its line's position, as in AllenNLP."""

    def check_path(self, path: str | Path) -> None:
        super().check_path(path)
        super().check_path(_labels_path(Path(path)))

    def _read(self, path: Path) -> Iterator[dict]:
        with open(path, encoding="utf-8") as lines, open(_labels_path(path), encoding="utf-8") as labels:
            for qid, (line, label) in self.shard_iterable(enumerate(zip(lines, labels))):
                self.num_parsed += 1
                try:
                    record = json.loads(line)
                    goal, first, second = record["goal"], record["sol1"], record["sol2"]
                    answer = int(label)
                except (ValueError, KeyError, TypeError) as error:
                    self.invalid(path, qid + 1, f"not a PIQA record with its label ({error!r})")
                    continue
                yield self.text_to_instance(str(qid), goal, [first, second], answer)


def _labels_path(path: Path) -> Path:
    labels = re.sub(r"\.jsonl$", "-labels.lst", str(path), count=1)
    if labels == str(path):
        raise DataError(f"{path}: a PIQA file ends in .jsonl (its labels are in the -labels.lst beside it)")
    return Path(labels)


@DatasetReader.register("swag")
class SwagReader(TransformerMCReader):
    """SWAG's CSV (a header row, then: id, video id, fold, start phrase, ..., ending0-3, label)."""

    def _read(self, path: Path) -> Iterator[dict]:
        with open(path, encoding="utf-8") as file:
            rows = enumerate(csv.reader(file))
            next(rows, None)  # the header
            for number, row in self.shard_iterable(rows):
                self.num_parsed += 1
                try:
                    label = int(row[11])
                except (IndexError, ValueError):
                    self.invalid(path, number + 1, "a SWAG row has 12 columns, the last an integer label")
                    continue
                yield self.text_to_instance(row[1], row[3], row[7:11], label)


@DatasetReader.register("commonsenseqa")
class CommonsenseQaReader(TransformerMCReader):
    """CommonsenseQA's JSON lines: ``id``, ``question.stem``, ``question.choices`` (``label``, ``text``),
    ``answerKey``."""

    def _read(self, path: Path) -> Iterator[dict]:
        for number, record in self.json_lines(path, ("id", "question", "answerKey")):
            try:
                choices = [(choice["label"], choice["text"]) for choice in record["question"]["choices"]]
                stem = record["question"]["stem"]
                answer = [label for label, _ in choices].index(record["answerKey"])
            except (KeyError, TypeError, ValueError) as error:
                self.invalid(path, number, f"not a CommonsenseQA question with its answer among the choices "
                             f"({error!r})")
                continue
            yield self.text_to_instance(record["id"], stem, [text for _, text in choices], answer)


@DatasetReader.register("piqa_tt")
class PiqaTransformerToolkitReader(PiqaReader):
    """AllenNLP's ``piqa_tt`` (for ``transformer_mc_tt``): PIQA encoded by the tokenizer itself, each pair
    ``(start.strip(), choice)`` truncated ``longest_first`` to ``length_limit``; the same fields as ``piqa``."""

    def text_to_instance(self, qid: str, start: str, alternatives: list[str], label: int | None = None) -> dict:
        tokenizer = self.tokenizer
        encoded = tokenizer([(start.strip(), alternative) for alternative in alternatives], truncation="longest_first",
                            max_length=self.length_limit, return_token_type_ids=True)
        ids = [np.asarray(row, dtype=np.int64) for row in encoded["input_ids"]]
        types = [np.asarray(row, dtype=np.int64) for row in encoded["token_type_ids"]]
        return self.instance(qid, ids, types, label)
