"""SQuAD JSON for a transformer QA model: AllenNLP's ``transformer_squad`` keys, one instance per question.

A context longer than ``length_limit`` (with the question and the special tokens) is cut into windows of
context tokens that overlap by ``stride`` tokens, as AllenNLP does. Unlike AllenNLP, a question's windows stay
together in ONE instance (``(windows, tokens)`` arrays): the model picks the best span across them and a
question is scored once, in one batch on one worker, so SQuAD EM/F1 are plain sums over questions and sync
exactly over any number of workers. A window without the (first) answer is trained to point at [CLS], as in
AllenNLP, or left out of the loss with ``skip_impossible_questions`` (AllenNLP skipped that window); a question
without answers (SQuAD 2.0's impossible ones) is then skipped and counted.

An answer whose ``answer_start`` does not point at its text in the context is an error naming the file and the
question id, or, with ``skip_invalid``, the question is skipped and counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np

from distrain.config.constraints import NonNegativeInt, PositiveInt
from distrain.data.fields import IGNORED_LABEL, ArrayField, MetadataField
from distrain.data.reader import DataError, DatasetReader
from distrain.zoo.rc.readers.squad_json import squad_articles, squad_questions
from distrain.pretrained import PretrainedName

FIELDS = ("question_with_context", "type_ids", "attention_mask", "context_mask", "span_start", "span_end",
          "metadata")


class TokenizerOnFirstUse:
    """A reader's pretrained tokenizer (``transformer_model_name``), loaded on first use, so ``distrain check``
    does not pay for it."""

    transformer_model_name: str
    _tokenizer: Any = None

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            from distrain.pretrained import load_tokenizer

            self._tokenizer = load_tokenizer(self.transformer_model_name)
            self.tokenizer_loaded(self._tokenizer)
        return self._tokenizer

    def tokenizer_loaded(self, tokenizer: Any) -> None:
        """What the reader learns from, or refuses in, its tokenizer once loaded (here: nothing)."""


@DatasetReader.register("transformer_squad")
class TransformerSquadReader(TokenizerOnFirstUse, DatasetReader):
    """SQuAD v1.1/v2.0 JSON (``{"data": [{"paragraphs": [{"context", "qas": [...]}]}]}``); see the module doc.

    Reads only its share of the questions (question ``i`` belongs to reader ``i mod count``): the JSON is
    parsed whole, but only this reader's questions are tokenised."""

    distributed_aware = True

    def __init__(self, transformer_model_name: PretrainedName = "bert-base-cased", length_limit: PositiveInt = 384,
                 stride: NonNegativeInt = 128, skip_impossible_questions: bool = False,
                 max_query_length: PositiveInt = 64, **kwargs: Any) -> None:
        """AllenNLP's ``tokenizer_kwargs`` is not taken: the tokenizer is the model folder's own, as it is."""
        super().__init__(**kwargs)
        self.transformer_model_name = transformer_model_name
        self.length_limit = length_limit
        self.stride = stride
        self.skip_impossible_questions = skip_impossible_questions
        self.max_query_length = max_query_length
        self._layout: PairLayout | None = None

    def tokenizer_loaded(self, tokenizer: Any) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise DataError(f"{self.transformer_model_name}: transformer_squad needs a fast tokenizer "
                            "(its character offsets map answers to tokens)")

    @property
    def pair_layout(self) -> PairLayout:
        """Where the tokenizer puts its special tokens ([CLS] among them) around a question and a context."""
        self._layout = self._layout or PairLayout.of(self.tokenizer)
        return self._layout

    @classmethod
    def declared_fields(cls, arguments: Any) -> dict[str, bool]:
        return {name: True for name in FIELDS}

    # ------------------------------------------------------------------------------ reading
    def _read(self, path: Path) -> Iterator[dict]:
        articles = squad_articles(path)
        self.num_parsed += 1
        for question, context in self.shard_iterable(_questions(articles, path)):
            qid = question.get("id", "?")
            problem = answer_problem(question, context)
            if problem is not None:
                message = f"{path}: question {qid}: {problem}"
                if not self.skip_invalid:
                    raise DataError(message)
                self.num_skipped += 1
                continue
            answers = question.get("answers") or []
            if self.skip_impossible_questions and (not answers or question.get("is_impossible")):
                self.num_skipped += 1
                continue
            start = int(answers[0]["answer_start"]) if answers else None
            yield self.text_to_instance(question["question"], context, [a["text"] for a in answers], start, qid)

    def record_to_instance(self, record: dict) -> dict:
        """One question for ``distrain serve``: ``{"question": "...", "context": "..."}`` (no answers needed)."""
        question = self.require(record, "question", str, "a string")
        context = self.require(record, "context", str, "a string")
        return self.text_to_instance(question, context, None, None, record.get("id"))

    def input_fields(self) -> dict[str, str]:
        return {"question": "text", "context": "text"}

    def text_to_instance(self, question: str, context: str, answers: list[str] | None = None,
                         first_answer_start: int | None = None, qid: str | None = None) -> dict:
        tokenizer = self.tokenizer
        context_encoding = tokenizer(context, add_special_tokens=False, return_offsets_mapping=True)
        context_ids, offsets = context_encoding["input_ids"], context_encoding["offset_mapping"]
        question_ids = tokenizer(question, add_special_tokens=False)["input_ids"]
        question_ids = question_ids[: self.max_query_length]
        layout = self.pair_layout
        space = self.length_limit - len(question_ids) - layout.special_count
        if space <= 0:
            raise DataError(f"dataset_reader.length_limit: {self.length_limit} leaves no room for the context after "
                            f"a question of {len(question_ids)} tokens and {layout.special_count} special tokens")
        answer_tokens = None
        if answers and first_answer_start is not None:
            answer_tokens = char_span_to_tokens(offsets, first_answer_start, first_answer_start + len(answers[0]))
        ids, types, attention, context_mask, starts, ends, window_offsets = [], [], [], [], [], [], []
        for window_start in window_starts(len(context_ids), space, self.stride):
            window = context_ids[window_start: window_start + space]
            token_ids, type_ids, context_begin = layout.pair(question_ids, window)
            ids.append(np.asarray(token_ids, dtype=np.int64))
            types.append(np.asarray(type_ids, dtype=np.int64))
            attention.append(np.ones(len(token_ids), dtype=np.int64))
            in_context = np.zeros(len(token_ids), dtype=np.int64)
            in_context[context_begin: context_begin + len(window)] = 1
            context_mask.append(in_context)
            window_offsets.append([list(pair) for pair in offsets[window_start: window_start + len(window)]])
            target = _window_target(answer_tokens, window_start, len(window))
            if target is None:
                no_answer = IGNORED_LABEL if self.skip_impossible_questions else layout.cls_index
                target = (no_answer, no_answer)
            else:
                target = (target[0] + context_begin, target[1] + context_begin)
            starts.append(target[0])
            ends.append(target[1])
        metadata = {"id": qid, "question": question, "context": context, "answers": list(answers or []),
                    "offsets": window_offsets, "context_start": layout.context_begin(len(question_ids))}
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        return {
            "question_with_context": ArrayField(ids, pad_value=pad, column_kind="nested"),
            "type_ids": ArrayField(types, column_kind="nested"),
            "attention_mask": ArrayField(attention, column_kind="nested"),
            "context_mask": ArrayField(context_mask, column_kind="nested"),
            "span_start": ArrayField(np.asarray(starts, dtype=np.int64), pad_value=IGNORED_LABEL),
            "span_end": ArrayField(np.asarray(ends, dtype=np.int64), pad_value=IGNORED_LABEL),
            "metadata": MetadataField(metadata),
        }


def _questions(articles: Any, path: Path) -> Iterator[tuple[dict, str]]:
    """Every question with its context (a question that is not an object: the paragraph is named)."""
    for where, paragraph, question in squad_questions(articles, path):
        if not isinstance(question, dict):
            raise DataError(f'{path}: {where.rpartition(".qas")[0]} needs "qas", a list of questions')
        yield question, paragraph["context"]


def answer_problem(question: dict, context: str) -> str | None:
    """Why ``question``'s answers cannot be trusted (an offset that does not point at its text), or None."""
    if not isinstance(question.get("question"), str):
        return 'missing "question" text'
    for answer in question.get("answers") or []:
        text, start = answer.get("text"), answer.get("answer_start")
        if not isinstance(text, str) or not isinstance(start, int):
            return 'an answer needs "text" (a string) and "answer_start" (an integer)'
        found = context[start: start + len(text)]
        if found != text:
            return f"answer {text!r} does not match the context at answer_start {start} ({found!r} is there)"
    return None


def char_span_to_tokens(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """The first and last token overlapping characters ``[start, end)``; None when no token does."""
    inside = [index for index, (first, last) in enumerate(offsets) if first < end and last > start and last > first]
    return (inside[0], inside[-1]) if inside else None


def window_starts(length: int, space: int, stride: int) -> list[int]:
    """AllenNLP's windows: ``space`` tokens each, the next starting ``stride`` tokens before this one ends."""
    starts, start = [], 0
    while True:
        starts.append(start)
        start += space
        if start >= length:
            return starts
        start -= min(stride, space - 1)  # AllenNLP loops forever when stride >= space; here each step advances


def _window_target(answer: tuple[int, int] | None, window_start: int, size: int) -> tuple[int, int] | None:
    if answer is None:
        return None
    first, last = answer[0] - window_start, answer[1] - window_start
    return (first, last) if 0 <= first and last < size else None


class PairLayout:
    """Where a tokenizer puts its special tokens around (question, context), learnt from one probe pair."""

    def __init__(self, probe: list[int], types: list[int], cls_index: int) -> None:
        self.first, self.second = probe.index(-1), probe.index(-2)
        self.probe, self.types, self.cls_index = probe, types, cls_index
        self.special_count = len(probe) - 2

    @classmethod
    def of(cls, tokenizer: Any) -> PairLayout:
        """Encode the pair ("a", "b") and replace the two texts' tokens by the markers -1 and -2."""
        first = tokenizer("a", add_special_tokens=False)["input_ids"]
        second = tokenizer("b", add_special_tokens=False)["input_ids"]
        encoded = tokenizer("a", "b", return_token_type_ids=True)
        ids, types = list(encoded["input_ids"]), list(encoded["token_type_ids"])
        a = _find(ids, first, 0)
        b = _find(ids, second, a + len(first))
        probe = ids[:a] + [-1] + ids[a + len(first): b] + [-2] + ids[b + len(second):]
        types = types[:a + 1] + types[a + len(first): b + 1] + types[b + len(second):]
        cls_id = tokenizer.cls_token_id
        cls_index = probe.index(cls_id) if cls_id is not None and cls_id in probe else 0
        return cls(probe, types, cls_index)

    def context_begin(self, question_length: int) -> int:
        return self.second - 1 + question_length

    def pair(self, question: list[int], context: list[int]) -> tuple[list[int], list[int], int]:
        """Token ids, token type ids and where the context begins."""
        p, t, a, b = self.probe, self.types, self.first, self.second
        ids = p[:a] + question + p[a + 1: b] + context + p[b + 1:]
        types = t[:a] + [t[a]] * len(question) + t[a + 1: b] + [t[b]] * len(context) + t[b + 1:]
        return ids, types, self.context_begin(len(question))


def _find(ids: list[int], part: list[int], start: int) -> int:
    for index in range(start, len(ids) - len(part) + 1):
        if ids[index: index + len(part)] == part:
            return index
    raise ValueError(f"the tokenizer's pair encoding {ids} does not contain {part}")
