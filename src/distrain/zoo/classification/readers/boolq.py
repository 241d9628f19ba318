"""BoolQ's JSON lines (AllenNLP's ``boolq``): ``passage``, ``question`` and a boolean ``label``.

As in AllenNLP, passage and question are tokenized apart, cut to 448 and 60 tokens (most questions fit in 60;
512 - 4 - 60 = 448) and joined with the tokenizer's special tokens; the label is the answer as 0 or 1, not
indexed. The default tokenizer is AllenNLP's whitespace one (``just_spaces``). With a pretrained tokenizer
that adds special tokens itself (its default), AllenNLP's pieces carry them twice (``[CLS] [CLS] ...``): read
the same here, so archives trained by AllenNLP see what they were trained on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import LabelField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.just_spaces import WhitespaceTokenizer

PASSAGE_TOKENS = 448
QUESTION_TOKENS = 60


@DatasetReader.register("boolq")
class BoolQDatasetReader(DatasetReader):
    """Reads only its share of the lines (distributed-aware); a line missing ``passage`` or ``question``,
    or with a label that is not a boolean, is named by file:line."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "label": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for number, record in self.json_lines(path, required=("passage", "question")):
            label = record.get("label")
            if label is not None and not isinstance(label, (bool, int)):
                self.invalid(path, number, f'"label" must be a boolean, got {type(label).__name__}')
                continue
            yield self.text_to_instance(record["passage"], record["question"], label)

    def text_to_instance(self, passage: str, question: str, label: bool | None = None) -> dict:
        passage_tokens = self.tokenizer.tokens(passage)[:PASSAGE_TOKENS]
        question_tokens = self.tokenizer.tokens(question)[:QUESTION_TOKENS]
        tokens = self.tokenizer.with_special_tokens(passage_tokens, question_tokens)
        instance: dict = {"tokens": TextField(tokens, self.token_indexers)}
        if label is not None:
            instance["label"] = LabelField(int(label), skip_indexing=True)
        return instance
