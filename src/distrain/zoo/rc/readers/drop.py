"""DROP (Dua et al., 2019), AllenNLP's ``drop`` reader: ``{passage_id: {"passage", "qa_pairs": [...]}}``, one
instance per question, in one of three ``instance_format`` s.

- ``drop`` (for ``naqanet``): ``question`` and ``passage`` text fields; ``number_indices``, the passage tokens that
  read as numbers (:func:`~distrain.zoo.rc.readers.drop_answers.word_to_number`) and a last -1 standing for a number
  0 outside the passage; and every way to the answer: ``answer_as_passage_spans`` and ``answer_as_question_spans``
  (``(n, 2)`` inclusive spans), ``answer_as_add_sub_expressions`` (``(n, numbers)``: 0 left out, 1 added,
  2 subtracted) and ``answer_as_counts`` (0-9). A list with no way is one padding entry (-1; signs all 0), and
  these fields are there even for a question without an answer, as in AllenNLP.
- ``squad`` (for ``bidaf``, ``qanet``): ``span_start`` and ``span_end``, the most frequent answer span; a question
  whose answer is nowhere in the passage points at the last token (or is skipped, ``"passage_span"`` in
  ``skip_when_all_empty``).
- ``bert``: also ``question_and_passage`` (the question, ``[SEP]``, the passage), the answer spans counted in it.

Only the first annotation (``answer``) gives the training targets; every annotation (``answer`` and
``validated_answers``) is kept as ``answer_annotations`` in the metadata for the DROP metric. With
``skip_when_all_empty`` a question is skipped when none of the named kinds of target (``passage_span``,
``question_span``, ``addition_subtraction``, ``counting``) has a way to the answer. ``relaxed_span_match_for_finding_labels``
is AllenNLP's argument, which it stores and never reads: accepted, with no effect.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Literal

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.data.field import ArrayField
from distrain.data.fields import IndexField, LabelField, ListField, MetadataField, TensorField, TextField
from distrain.data.label_fields import SpanField
from distrain.data.reader import DataError, DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.zoo.rc.readers.drop_answers import (
    answer_type_and_texts, find_valid_add_sub_expressions, find_valid_counts, find_valid_spans,
    split_tokens_by_hyphen, word_to_number,
)
from distrain.zoo.rc.readers.squad import QuestionPassageRecords, word_tokenizer_and_indexers

AnswerKind = Literal["passage_span", "question_span", "addition_subtraction", "counting"]
ANSWER_FIELDS = ("answer_as_passage_spans", "answer_as_question_spans", "answer_as_add_sub_expressions",
                 "answer_as_counts")


@DatasetReader.register("drop")
class DropReader(QuestionPassageRecords, DatasetReader):
    """DROP JSON; see the module doc. Reads only its share of the questions; a passage is tokenized once, and only
    when this reader owns one of its questions."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 passage_length_limit: PositiveInt | None = None, question_length_limit: PositiveInt | None = None,
                 skip_when_all_empty: list[AnswerKind] | None = None,
                 instance_format: Literal["drop", "squad", "bert"] = "drop",
                 relaxed_span_match_for_finding_labels: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokenizer, self.token_indexers = word_tokenizer_and_indexers(tokenizer, token_indexers)
        self.passage_length_limit = passage_length_limit
        self.question_length_limit = question_length_limit
        self.skip_when_all_empty = list(skip_when_all_empty or [])
        self.instance_format = instance_format
        self.relaxed_span_match_for_finding_labels = relaxed_span_match_for_finding_labels

    @classmethod
    def declared_fields(cls, arguments: Any) -> dict[str, bool]:
        fields = {"question": True, "passage": True, "metadata": True}
        kind = arguments.get("instance_format") or "drop"
        if kind == "drop":
            return {**fields, "number_indices": True, **{name: True for name in ANSWER_FIELDS}}
        if kind == "squad":
            return {**fields, "span_start": False, "span_end": False}
        return {**fields, "question_and_passage": True, "answer_as_passage_spans": True}

    def _read(self, path: Path) -> Iterator[dict]:
        try:
            with open(path, encoding="utf-8") as file:
                passages = json.load(file)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise DataError(f"{path}: not DROP JSON ({error})") from None
        if not isinstance(passages, dict):
            raise DataError(f"{path}: DROP JSON is an object of passages by id, not a {type(passages).__name__}")
        self.num_parsed += 1
        tokenized: dict[str, list] = {}
        for passage_id, passage, question in self.shard_iterable(_questions(passages, path)):
            if passage_id not in tokenized:
                tokenized.clear()  # questions come passage by passage: keep one
                tokenized[passage_id] = split_tokens_by_hyphen(self.tokenizer.tokenize(passage["passage"]))
            annotations = ([question["answer"]] if "answer" in question else []) + \
                list(question.get("validated_answers") or [])
            instance = self.text_to_instance(question["question"].strip(), passage["passage"],
                                             question.get("query_id"), passage_id, annotations,
                                             tokenized[passage_id])
            if instance is None:
                self.num_skipped += 1
                continue
            yield instance

    def _words(self, text: str) -> list:
        tokens = split_tokens_by_hyphen(self.tokenizer.tokenize(text))
        if any(getattr(token, "idx", None) is None for token in tokens):
            raise DataError(f"the drop reader needs a tokenizer that keeps character offsets (spacy does; "
                            f"{type(self.tokenizer).__name__} does not): answers are found by them")
        return tokens

    def text_to_instance(self, question_text: str, passage_text: str, question_id: str | None = None,
                         passage_id: str | None = None, answer_annotations: list[dict] | None = None,
                         passage_tokens: list | None = None) -> dict | None:
        """The instance, or None when ``skip_when_all_empty`` drops the question."""
        passage_tokens = list(passage_tokens) if passage_tokens else self._words(passage_text)
        question_tokens = self._words(question_text)
        if self.passage_length_limit is not None:
            passage_tokens = passage_tokens[: self.passage_length_limit]
        if self.question_length_limit is not None:
            question_tokens = question_tokens[: self.question_length_limit]
        answer_annotations = list(answer_annotations or [])
        answer_type, answer_texts = (answer_type_and_texts(answer_annotations[0]) if answer_annotations
                                     else (None, []))
        tokenized_answers = [" ".join(token.text for token in self._words(text)) for text in answer_texts]
        metadata = {"original_passage": passage_text, "original_question": question_text,
                    "passage_id": passage_id, "question_id": question_id, "answer_annotations": answer_annotations}
        if self.instance_format == "drop":
            return self._drop_instance(question_tokens, passage_tokens, answer_type, answer_texts, tokenized_answers,
                                       metadata)
        passage_spans = find_valid_spans(passage_tokens, tokenized_answers) if tokenized_answers else []
        if not passage_spans and "passage_span" in self.skip_when_all_empty:
            return None
        if self.instance_format == "squad":
            return self._squad_instance(question_tokens, passage_tokens, passage_spans, answer_texts, metadata)
        return self._bert_instance(question_tokens, passage_tokens, passage_spans, answer_texts, metadata)

    def _drop_instance(self, question_tokens: list, passage_tokens: list, answer_type: str | None,
                       answer_texts: list[str], tokenized_answers: list[str], extra: dict) -> dict | None:
        numbers, number_indices = [], []
        for position, token in enumerate(passage_tokens):
            number = word_to_number(token.text)
            if number is not None:
                numbers.append(number)
                number_indices.append(position)
        numbers.append(0)  # AllenNLP's: every passage offers at least one number
        number_indices.append(-1)
        targets = [number for number in map(word_to_number, answer_texts) if number is not None]
        ways = {"passage_span": find_valid_spans(passage_tokens, tokenized_answers) if tokenized_answers else [],
                "question_span": find_valid_spans(question_tokens, tokenized_answers) if tokenized_answers else [],
                "addition_subtraction": (find_valid_add_sub_expressions(numbers, targets)
                                         if answer_type in ("number", "date") else []),
                "counting": find_valid_counts(targets) if answer_type == "number" else []}
        if self.skip_when_all_empty and not any(ways[kind] for kind in self.skip_when_all_empty):
            return None
        answer_info = {"answer_texts": answer_texts, "answer_passage_spans": ways["passage_span"],
                       "answer_question_spans": ways["question_span"],
                       "signs_for_add_sub_expressions": ways["addition_subtraction"], "counts": ways["counting"]}
        passage = TextField(passage_tokens, self.token_indexers)
        question = TextField(question_tokens, self.token_indexers)
        metadata = {"original_passage": extra["original_passage"],
                    "passage_token_offsets": _offsets(passage_tokens), "question_token_offsets": _offsets(question_tokens),
                    "question_tokens": [token.text for token in question_tokens],
                    "passage_tokens": [token.text for token in passage_tokens],
                    "number_tokens": [str(number) for number in numbers], "number_indices": number_indices,
                    "answer_texts": answer_texts, **extra, "original_numbers": numbers, "answer_info": answer_info}
        signs = ways["addition_subtraction"] or [[0] * len(numbers)]
        return {"passage": passage, "question": question,
                "number_indices": ListField([IndexField(index, passage) for index in number_indices]),
                "answer_as_passage_spans": _spans(ways["passage_span"], passage),
                "answer_as_question_spans": _spans(ways["question_span"], question),
                # labels that are ints already: AllenNLP's SequenceLabelField does not index them
                "answer_as_add_sub_expressions": ListField([ArrayField(np.asarray(labels, dtype=np.int64))
                                                            for labels in signs]),
                "answer_as_counts": ListField([LabelField(count, skip_indexing=True)
                                               for count in ways["counting"] or [-1]]),
                "metadata": MetadataField(metadata)}

    def _squad_instance(self, question_tokens: list, passage_tokens: list, spans: list[tuple[int, int]],
                        answer_texts: list[str], extra: dict) -> dict:
        if not spans:
            spans = [(len(passage_tokens) - 1, len(passage_tokens) - 1)]
        metadata = {**_texts_metadata(question_tokens, passage_tokens, extra["original_passage"], answer_texts),
                    "token_offsets": _offsets(passage_tokens), **extra, "valid_passage_spans": spans}
        start, end = Counter(spans).most_common(1)[0][0]  # several: the span given most often (AllenNLP's choice)
        return {"passage": TextField(passage_tokens, self.token_indexers),
                "question": TextField(question_tokens, self.token_indexers),
                "span_start": TensorField([start], dtype=np.int64), "span_end": TensorField([end], dtype=np.int64),
                "metadata": MetadataField(metadata)}

    def _bert_instance(self, question_tokens: list, passage_tokens: list, spans: list[tuple[int, int]],
                       answer_texts: list[str], extra: dict) -> dict:
        joined = question_tokens + [Token("[SEP]")] + passage_tokens
        shift = len(question_tokens) + 1
        spans = [(start + shift, end + shift) for start, end in spans] or [(len(joined) - 1, len(joined) - 1)]
        both = TextField(joined, self.token_indexers)
        metadata = {**_texts_metadata(question_tokens, passage_tokens, extra["original_passage"], answer_texts),
                    "passage_token_offsets": _offsets(passage_tokens), "answer_texts": answer_texts, **extra}
        return {"passage": TextField(passage_tokens, self.token_indexers),
                "question": TextField(question_tokens, self.token_indexers), "question_and_passage": both,
                "answer_as_passage_spans": _spans(spans, both), "metadata": MetadataField(metadata)}


def _offsets(tokens: list) -> list[tuple[int, int]]:
    return [(token.idx, token.idx + len(token.text)) for token in tokens]


def _spans(spans: list[tuple[int, int]], text: TextField) -> ListField:
    return ListField([SpanField(start, end, text) for start, end in spans or [(-1, -1)]])


def _texts_metadata(question_tokens: list, passage_tokens: list, passage_text: str, answer_texts: list[str]) -> dict:
    metadata: dict[str, Any] = {"original_passage": passage_text,
                                "question_tokens": [token.text for token in question_tokens],
                                "passage_tokens": [token.text for token in passage_tokens]}
    if answer_texts:
        metadata["answer_texts"] = answer_texts
    return metadata


def _questions(passages: dict, path: Path) -> Iterator[tuple[str, dict, dict]]:
    """Every (passage id, passage, question), in file order; a malformed one is named by its place."""
    for passage_id, passage in passages.items():
        if not isinstance(passage, dict) or not isinstance(passage.get("passage"), str) \
                or not isinstance(passage.get("qa_pairs"), list):
            raise DataError(f'{path}: passage "{passage_id}" needs "passage" (a string) and "qa_pairs" (a list)')
        for position, question in enumerate(passage["qa_pairs"]):
            where = f'{path}: passage "{passage_id}", qa_pairs[{position}]'
            if not isinstance(question, dict) or not isinstance(question.get("question"), str):
                raise DataError(f'{where} needs "question", a string')
            for key, answer in [("answer", question.get("answer"))] + [
                    (f"validated_answers[{i}]", a) for i, a in enumerate(question.get("validated_answers") or [])]:
                if key == "answer" and "answer" not in question:
                    continue
                if not isinstance(answer, dict) or not {"spans", "number", "date"} <= set(answer):
                    raise DataError(f'{where}: {key} needs "spans", "number" and "date"')
            yield passage_id, passage, question
