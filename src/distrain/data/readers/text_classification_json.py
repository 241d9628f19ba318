"""JSON lines with a text and a label: ``{"text": "...", "label": "positive"}``."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from distrain.config.constraints import PositiveInt
from distrain.data.fields import LabelField, TextField
from distrain.data.reader import DatasetReader, RecordError
from distrain.data.token_indexer import TokenIndexer
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.words_and_punctuation import WordTokenizer


@DatasetReader.register("text_classification_json")
class TextClassificationJsonReader(DatasetReader):
    """JSON lines with a text and a label; reads only its share, skipping other lines unparsed.

    With ``token_indexers`` (AllenNLP's form) the ``tokens`` field is indexed by them and the model gets
    ``{indexer: {name: tensor}}``; ``max_sequence_length`` cuts the tokens, ``skip_label_indexing``
    takes integer labels as class indices."""
    distributed_aware = True

    def __init__(
        self,
        tokenizer: Tokenizer | None = None,
        text_key: str = "text",
        label_key: str = "label",
        token_indexers: dict[str, TokenIndexer] | None = None,
        max_sequence_length: PositiveInt | None = None,
        skip_label_indexing: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WordTokenizer()
        self.text_key = text_key
        self.label_key = label_key
        self.token_indexers = token_indexers
        self.max_sequence_length = max_sequence_length
        self.skip_label_indexing = skip_label_indexing

    def _read(self, path: Path) -> Iterator[dict]:
        for number, record in self.json_lines(path, required=(self.text_key,)):
            try:
                instance = self.record_to_instance(record)
            except RecordError as error:
                self.invalid(path, number, str(error))
                continue
            yield instance

    def record_to_instance(self, record: dict) -> dict:
        text = self.require(record, self.text_key, str, "a string")
        label = record.get(self.label_key)
        if label is not None and not isinstance(label, (str, int)):
            raise RecordError(f'"{self.label_key}" must be a string or an integer, got {type(label).__name__}', self.label_key)
        return self.text_to_instance(text, label)

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "label": False}

    def input_fields(self) -> dict[str, str]:
        return {self.text_key: "text"}

    def text_to_instance(self, text: str, label: str | int | None = None) -> dict:
        if self.token_indexers is not None:
            tokens = self.tokenizer.tokenize(text)[: self.max_sequence_length]
            instance = {"tokens": TextField(tokens, self.token_indexers)}
        else:
            instance = {"tokens": self.tokenizer.to_field(text)}
        if label is not None:
            instance["label"] = (LabelField(int(label), skip_indexing=True) if self.skip_label_indexing
                                 else LabelField(str(label)))
        return instance
