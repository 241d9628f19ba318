"""Test components for ``distrain serve``: a reader that keeps each record's text beside its tokens, and a
classifier that can fail on a marker, be slow, load slowly, and writes down every text it computed."""

from __future__ import annotations

import time
from typing import Any

import torch

from distrain.data.fields import MetadataField
from distrain.data.readers.text_classification_json import TextClassificationJsonReader
from distrain.data.reader import DatasetReader
from distrain.data.vocabulary import Vocabulary
from distrain.config.lazy import Lazy
from distrain.models.basic_classifier import BasicClassifier
from distrain.models.model import Model
from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.modules.text_field_embedder import TextFieldTensors


@DatasetReader.register("text_with_raw_json")
class TextWithRawJsonReader(TextClassificationJsonReader):
    """``text_classification_json`` plus the raw text as metadata, so the model can see what it computes."""

    def text_to_instance(self, text: str, label: str | int | None = None) -> dict:
        return {**super().text_to_instance(text, label), "raw": MetadataField(text)}


@Model.register("probe_classifier")
class ProbeClassifier(BasicClassifier):
    """A basic classifier that raises on any text containing ``fail_marker``, sleeps ``delay_s`` per batch,
    sleeps ``init_delay_s`` when built, and appends every text it computes to ``record_file``."""

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: Lazy[Seq2VecEncoder],
        embedding_dim: int = 8,
        fail_marker: str = "EXPLODE",
        delay_s: float = 0.0,
        init_delay_s: float = 0.0,
        record_file: str | None = None,
    ) -> None:
        super().__init__(vocab, encoder, embedding_dim=embedding_dim)
        time.sleep(init_delay_s)
        self.fail_marker = fail_marker
        self.delay_s = delay_s
        self.record_file = record_file

    def forward(self, tokens: TextFieldTensors, raw: list[str], label: torch.Tensor | None = None, **_: Any) -> dict:
        if any(self.fail_marker in text for text in raw):
            raise RuntimeError(f"probe model refuses {self.fail_marker!r}")
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.record_file:
            with open(self.record_file, "a", encoding="utf-8") as out:
                out.write("".join(text + "\n" for text in raw))
        return super().forward(tokens, label)
