"""SQuAD JSON for word-level reading comprehension models (AllenNLP's ``squad``, ``squad1`` and ``squad2``): one
instance per question, with ``question`` and ``passage`` text fields, the answer as inclusive token indices
``span_start`` and ``span_end`` into the passage, and ``metadata`` (``original_passage``, ``token_offsets``,
``question_tokens``, ``passage_tokens``, ``answer_texts``, ``id``), the keys AllenNLP's ``bidaf`` reads.

This reader is not ``transformer_squad``: that one cuts a passage into a pretrained tokenizer's windows and keeps a
question's windows in one instance; this one tokenizes words (spaCy by default) and cuts a long passage at
``passage_length_limit`` tokens, as AllenNLP does, dropping answers past the cut. An answer cut off entirely skips
the question with ``skip_impossible_questions`` (AllenNLP's old name ``skip_invalid_examples`` is accepted), else
points at the last token so evaluation still sees the question (its answer texts are kept for EM and F1).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.data.fields import MetadataField, TensorField, TextField
from distrain.data.reader import DataError, DatasetReader
from distrain.zoo.rc.readers.squad_json import squad_articles, squad_questions
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token, Tokenizer

SQUAD2_NO_ANSWER_TOKEN = "@@<NO_ANSWER>@@"


def word_tokenizer_and_indexers(tokenizer: Tokenizer | None, token_indexers: dict[str, TokenIndexer] | None
                                ) -> tuple[Tokenizer, dict[str, TokenIndexer]]:
    """The word tokenizer and indexers of AllenNLP's SQuAD-layout readers (``squad``, ``quac``): those given, else
    AllenNLP's defaults, spaCy's words and one ``tokens`` id each."""
    if tokenizer is None:
        from distrain.data.tokenizers.spacy import SpacyTokenizer

        tokenizer = SpacyTokenizer()
    return tokenizer, token_indexers or {"tokens": SingleIdTokenIndexer()}


class QuestionPassageRecords:
    """``distrain serve``'s record of one question over a passage, ``{"question": "...", "passage": "..."}``
    (AllenNLP's predictor input), for the readers whose ``text_to_instance`` starts ``(question, passage)``."""

    def record_to_instance(self, record: dict) -> dict:
        question = self.require(record, "question", str, "a string")
        passage = self.require(record, "passage", str, "a string")
        return self.text_to_instance(question, passage, **self.record_extras(record))

    def record_extras(self, record: dict) -> dict[str, Any]:
        """What else of the record ``text_to_instance`` takes."""
        return {}

    def input_fields(self) -> dict[str, str]:
        return {"question": "text", "passage": "text"}


@DatasetReader.register("squad")
class SquadReader(QuestionPassageRecords, DatasetReader):
    """SQuAD v1.1/v2.0 JSON (``{"data": [{"paragraphs": [{"context", "qas": [...]}]}]}``); see the module doc.

    ``no_answer_token`` (SQuAD 2.0) is appended to every passage and is the answer of an impossible question;
    without it an impossible question is an error naming the file and the question. Reads only its share of
    the questions; a paragraph is tokenized once, and only when this reader owns one of its questions."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 passage_length_limit: PositiveInt | None = None, question_length_limit: PositiveInt | None = None,
                 skip_impossible_questions: bool = False, no_answer_token: str | None = None,
                 skip_invalid_examples: bool | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokenizer, self.token_indexers = word_tokenizer_and_indexers(tokenizer, token_indexers)
        self.passage_length_limit = passage_length_limit
        self.question_length_limit = question_length_limit
        self.skip_impossible_questions = (skip_impossible_questions if skip_invalid_examples is None
                                          else skip_invalid_examples)
        self.no_answer_token = no_answer_token

    @classmethod
    def declared_fields(cls, arguments: Any) -> dict[str, bool]:
        return {"question": True, "passage": True, "metadata": True, "span_start": False, "span_end": False}

    def _read(self, path: Path) -> Iterator[dict]:
        articles = squad_articles(path)
        self.num_parsed += 1
        tokenized: dict[int, list] = {}
        for paragraph, question in self.shard_iterable(_questions(articles, path)):
            context = paragraph["context"]
            if id(paragraph) not in tokenized:
                tokenized.clear()  # questions come paragraph by paragraph: keep one
                tokenized[id(paragraph)] = self.tokenizer.tokenize(context)
            qid = question.get("id")
            impossible = bool(question.get("is_impossible", False))
            answers = [] if impossible else question.get("answers") or []
            texts = [answer["text"] for answer in answers]
            spans = [(answer["answer_start"], answer["answer_start"] + len(answer["text"])) for answer in answers]
            if impossible and self.no_answer_token is None:
                raise DataError(f"{path}: question {qid} is impossible (SQuAD 2.0), but dataset_reader."
                                f"no_answer_token is not set (the squad2 reader sets it to {SQUAD2_NO_ANSWER_TOKEN})")
            question_text = question["question"].strip().replace("\n", "")
            instance = self.text_to_instance(question_text, context, impossible, spans, texts,
                                             tokenized[id(paragraph)], {"id": qid})
            if instance is None:
                self.num_skipped += 1
                continue
            yield instance

    def record_extras(self, record: dict) -> dict[str, Any]:
        return {"additional_metadata": {"id": record.get("id")}}

    def text_to_instance(self, question_text: str, passage_text: str, is_impossible: bool = False,
                         char_spans: Iterable[tuple[int, int]] | None = None, answer_texts: list[str] | None = None,
                         passage_tokens: list | None = None,
                         additional_metadata: dict[str, Any] | None = None) -> dict | None:
        """The instance, or None when ``skip_impossible_questions`` drops a question whose answers were all cut."""
        tokens = list(passage_tokens if passage_tokens is not None else self.tokenizer.tokenize(passage_text))
        if any(getattr(token, "idx", None) is None for token in tokens):
            raise DataError(f"the squad reader needs a tokenizer that keeps character offsets (spacy does; "
                            f"{type(self.tokenizer).__name__} does not): answers are found by them")
        if self.no_answer_token is not None:
            if self.passage_length_limit is not None:
                tokens = tokens[: self.passage_length_limit - 1]
            end = tokens[-1].idx + len(tokens[-1].text) + 1 if tokens else 0
            tokens.append(Token(self.no_answer_token, end, end + len(self.no_answer_token), self.no_answer_token))
        elif self.passage_length_limit is not None:
            tokens = tokens[: self.passage_length_limit]
        question_tokens = self.tokenizer.tokenize(question_text)
        if self.question_length_limit is not None:
            question_tokens = question_tokens[: self.question_length_limit]
        answer_texts = list(answer_texts or [])
        offsets = [(token.idx, token.idx + len(token.text)) for token in tokens]
        token_spans: list[tuple[int, int]] = []
        if is_impossible:
            answer_texts = [self.no_answer_token]
            token_spans = [(len(tokens) - 1, len(tokens) - 1)]
        else:
            char_spans = list(char_spans or [])
            token_spans = [char_span_to_token_span(offsets, span) for span in char_spans
                           if offsets and span[1] <= offsets[-1][1]]  # answers past a cut passage are dropped
            if char_spans and not token_spans:
                if self.skip_impossible_questions:
                    return None
                if self.no_answer_token is not None:
                    answer_texts = [self.no_answer_token]
                token_spans = [(len(tokens) - 1, len(tokens) - 1)]
        metadata = {"original_passage": passage_text, "token_offsets": offsets,
                    "question_tokens": [token.text for token in question_tokens],
                    "passage_tokens": [token.text for token in tokens]}
        if answer_texts:
            metadata["answer_texts"] = answer_texts
        metadata.update(additional_metadata or {})
        instance: dict = {"passage": TextField(tokens, self.token_indexers),
                          "question": TextField(question_tokens, self.token_indexers)}
        if token_spans:  # several annotations: the one most annotators gave (AllenNLP's choice)
            start, end = Counter(token_spans).most_common(1)[0][0]
            instance["span_start"] = TensorField([start], dtype=np.int64)
            instance["span_end"] = TensorField([end], dtype=np.int64)
        instance["metadata"] = MetadataField(metadata)
        return instance


@DatasetReader.register("squad1")
class Squad1Reader(SquadReader):
    """AllenNLP's ``squad1``: ``squad`` for SQuAD v1.1 (no ``no_answer_token``)."""

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 passage_length_limit: PositiveInt | None = None, question_length_limit: PositiveInt | None = None,
                 skip_impossible_questions: bool = False, **kwargs: Any) -> None:
        super().__init__(tokenizer, token_indexers, passage_length_limit, question_length_limit,
                         skip_impossible_questions, None, **kwargs)


@DatasetReader.register("squad2")
class Squad2Reader(SquadReader):
    """AllenNLP's ``squad2``: ``squad`` for SQuAD v2.0, ``no_answer_token`` set by default."""

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 passage_length_limit: PositiveInt | None = None, question_length_limit: PositiveInt | None = None,
                 skip_impossible_questions: bool = False, no_answer_token: str = SQUAD2_NO_ANSWER_TOKEN,
                 **kwargs: Any) -> None:
        super().__init__(tokenizer, token_indexers, passage_length_limit, question_length_limit,
                         skip_impossible_questions, no_answer_token, **kwargs)


def _questions(articles: Any, path: Path) -> Iterator[tuple[dict, dict]]:
    """Every (paragraph, question); a malformed question or answer is named by its position."""
    for where, paragraph, question in squad_questions(articles, path):
        if not isinstance(question, dict) or not isinstance(question.get("question"), str):
            raise DataError(f'{path}: {where} needs "question", a string')
        for answer in question.get("answers") or []:
            if not isinstance(answer.get("text"), str) or not isinstance(answer.get("answer_start"), int):
                raise DataError(f'{path}: {where}: an answer needs "text" (a string) and '
                                '"answer_start" (an integer)')
        yield paragraph, question


def char_span_to_token_span(offsets: list[tuple[int, int]], span: tuple[int, int]) -> tuple[int, int]:
    """The inclusive token span closest to the character span ``[start, end)`` (AllenNLP's rules): the token
    holding the first character, through the first token ending at or after the last; a span that does not
    fall on token boundaries still maps to the tokens it touches."""
    start, end = span
    first = 0
    while first < len(offsets) and offsets[first][0] < start:
        first += 1
    # overshot: the token before holds the start, or this one begins after it
    if (first > 0 and offsets[first - 1][1] > start) or (first < len(offsets) and offsets[first][0] > start):
        first = max(first - 1, 0)
    if first >= len(offsets):
        raise DataError(f"no token starts the answer at character {start}")
    last = first
    while last < len(offsets) and offsets[last][1] < end:
        last += 1
    if last == len(offsets) and start < offsets[-1][1] and end - 8 < offsets[-1][1]:
        last -= 1  # a span a few characters past the last token: AllenNLP salvages it
    if last >= len(offsets):
        raise DataError(f"the answer's characters {start}..{end} lie past the passage's tokens")
    return first, last
