"""QuAC (Question Answering in Context), AllenNLP's ``quac``: one instance per dialog, for ``dialog_qa``.

A QuAC file has SQuAD's layout, each paragraph a dialog: its questions come in order and each has ``answers``
(``text``, ``answer_start``), ``yesno`` (y, n, x) and ``followup`` (y, m, n). The instance holds ``passage`` (a text
field), ``question`` (a list of text fields, one per turn), ``span_start`` and ``span_end`` (list fields of token
indices: of a question's answers, the last, the original annotator's), ``yesno_list`` and ``followup_list`` (list
fields of labels), and ``metadata`` (``original_passage``, ``token_offsets``, ``question_tokens``, ``passage_tokens``,
``instance_id``, ``question``, ``answer_texts_list``). An answer list where CANNOTANSWER is at least half becomes
``["CANNOTANSWER"]``, otherwise loses its CANNOTANSWERs (AllenNLP's ``handle_cannot``).

With ``num_context_answers`` k > 0 the previous k answers are marked in the passage, one tag sequence each
(``p1_answer_marker`` … ``pk_answer_marker``, namespace ``answer_tags``): ``<i_start>``, ``<i_in>``, ``<i_end>`` (or
``<i_>`` for a one-token answer) on the i-th previous answer, ``O`` elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Iterator

from annotated_types import Ge, Le

from distrain.data.fields import IndexField, LabelField, ListField, MetadataField, SequenceLabelField, TextField
from distrain.data.reader import DataError, DatasetReader
from distrain.zoo.rc.readers.squad import char_span_to_token_span, word_tokenizer_and_indexers
from distrain.zoo.rc.readers.squad_json import squad_articles, squad_paragraphs
from distrain.data.token_indexer import TokenIndexer
from distrain.data.tokenizer import Tokenizer

CANNOT_ANSWER = "CANNOTANSWER"


@DatasetReader.register("quac")
class QuacReader(DatasetReader):
    """QuAC JSON; see the module doc. Reads only its share of the dialogs; a malformed question or answer is named
    by its position in the file."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 num_context_answers: Annotated[int, Ge(0), Le(3)] = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokenizer, self.token_indexers = word_tokenizer_and_indexers(tokenizer, token_indexers)
        self.num_context_answers = num_context_answers

    @classmethod
    def declared_fields(cls, arguments: Any) -> dict[str, bool]:
        markers = {f"p{k}_answer_marker": True for k in range(1, int(arguments.get("num_context_answers") or 0) + 1)}
        return {"question": True, "passage": True, "metadata": True, "span_start": True, "span_end": True,
                **markers, "yesno_list": True, "followup_list": True}

    def _read(self, path: Path) -> Iterator[dict]:
        articles = squad_articles(path)
        self.num_parsed += 1
        for where, paragraph in self.shard_iterable(squad_paragraphs(articles, path)):
            questions = [_question(question, f"{path}: {where}.qas[{q}]") for q, question in enumerate(paragraph["qas"])]
            if not questions:
                continue  # a dialog without turns has nothing to learn or answer
            context = paragraph["context"]
            answers = [question["answers"] for question in questions]
            metadata = {"instance_id": [question.get("id") for question in questions],
                        "question": [question["question"].strip().replace("\n", "") for question in questions],
                        "answer_texts_list": [[answer["text"] for answer in answer_list] for answer_list in answers]}
            spans = [[(answer["answer_start"], answer["answer_start"] + len(answer["text"])) for answer in answer_list]
                     for answer_list in answers]
            yield self.text_to_instance(metadata["question"], context, spans, self.tokenizer.tokenize(context),
                                        [str(question["yesno"]) for question in questions],
                                        [str(question["followup"]) for question in questions], metadata)

    def text_to_instance(self, question_texts: list[str], passage_text: str, char_spans: list[list[tuple[int, int]]],
                         passage_tokens: list | None = None, yesno_list: list[str] | None = None,
                         followup_list: list[str] | None = None,
                         additional_metadata: dict[str, Any] | None = None) -> dict:
        """A dialog: its questions, the passage, each question's answers as character spans ``[start, end)``."""
        tokens = list(passage_tokens if passage_tokens is not None else self.tokenizer.tokenize(passage_text))
        if any(getattr(token, "idx", None) is None for token in tokens):
            raise DataError(f"the quac reader needs a tokenizer that keeps character offsets (spacy does; "
                            f"{type(self.tokenizer).__name__} does not): answers are found by them")
        offsets = [(token.idx, token.idx + len(token.text)) for token in tokens]
        question_tokens = [self.tokenizer.tokenize(text) for text in question_texts]
        passage = TextField(tokens, self.token_indexers)
        # of a question's answers, the last is the original annotator's (QuAC's dev set has several)
        answer_spans = [char_span_to_token_span(offsets, spans[-1]) for spans in char_spans]
        metadata = {"original_passage": passage_text, "token_offsets": offsets,
                    "question_tokens": [[token.text for token in question] for question in question_tokens],
                    "passage_tokens": [token.text for token in tokens], **(additional_metadata or {})}
        if "answer_texts_list" in metadata:
            metadata["answer_texts_list"] = [handle_cannot(texts) for texts in metadata["answer_texts_list"]]
        instance: dict = {"passage": passage,
                          "question": ListField([TextField(question, self.token_indexers) for question in question_tokens]),
                          "span_start": ListField([IndexField(start, passage) for start, _ in answer_spans]),
                          "span_end": ListField([IndexField(end, passage) for _, end in answer_spans])}
        for k in range(1, self.num_context_answers + 1):
            instance[f"p{k}_answer_marker"] = ListField([
                SequenceLabelField(previous_answer_tags(answer_spans, turn, k, len(tokens)), passage, "answer_tags")
                for turn in range(len(answer_spans))])
        if yesno_list:
            instance["yesno_list"] = ListField([LabelField(label, "yesno_labels") for label in yesno_list])
        if followup_list:
            instance["followup_list"] = ListField([LabelField(label, "followup_labels") for label in followup_list])
        instance["metadata"] = MetadataField(metadata)
        return instance


def previous_answer_tags(spans: list[tuple[int, int]], turn: int, distance: int, length: int) -> list[str]:
    """The passage's tags marking the answer ``distance`` turns before ``turn`` (all ``O`` if there is none)."""
    tags = ["O"] * length
    if turn < distance:
        return tags
    start, end = spans[turn - distance]
    if start == end:
        tags[start] = f"<{distance}_>"
        return tags
    tags[start], tags[end] = f"<{distance}_start>", f"<{distance}_end>"
    for position in range(start + 1, end):
        tags[position] = f"<{distance}_in>"
    return tags


def handle_cannot(answers: list[str]) -> list[str]:
    """``["CANNOTANSWER"]`` when at least half of the references say so, else the references that do not."""
    cannot = sum(answer == CANNOT_ANSWER for answer in answers)
    if cannot >= len(answers) - cannot:
        return [CANNOT_ANSWER]
    return [answer for answer in answers if answer != CANNOT_ANSWER]


def _question(question: Any, where: str) -> dict:
    """``question``, checked to have the keys a QuAC turn needs."""
    if not isinstance(question, dict) or not isinstance(question.get("question"), str):
        raise DataError(f'{where} needs "question", a string')
    for key in ("yesno", "followup"):
        if key not in question:
            raise DataError(f'{where} needs "{key}" (QuAC\'s dialog acts)')
    answers = question.get("answers")
    if not isinstance(answers, list) or not answers:
        raise DataError(f'{where} needs "answers", a non-empty list')
    for answer in answers:
        if not isinstance(answer, dict) or not isinstance(answer.get("text"), str) \
                or not isinstance(answer.get("answer_start"), int):
            raise DataError(f'{where}: an answer needs "text" (a string) and "answer_start" (an integer)')
    return question
