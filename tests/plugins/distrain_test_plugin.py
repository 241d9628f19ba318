"""A user plugin, as a researcher would write one: a TSV reader and a tiny model of their own."""

from __future__ import annotations

from pathlib import Path

import torch

from distrain import DatasetReader, LabelField, Model, TextField, get_token_ids_from_text_field_tensors
from distrain.metrics.categorical_accuracy import CategoricalAccuracy


@DatasetReader.register("tsv_classification")
class TsvClassificationReader(DatasetReader):
    """``label<TAB>text`` per line."""

    def __init__(self, lowercase: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lowercase = lowercase

    def _read(self, path: Path):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            label, sep, text = line.partition("\t")
            if not sep:
                self.invalid(path, number, "expected label<TAB>text")
                continue
            yield {"tokens": TextField((text.lower() if self.lowercase else text).split()), "label": LabelField(label)}


@Model.register("mean_embedding_classifier")
class MeanEmbeddingClassifier(Model):
    def __init__(self, vocab, dim: int = 4) -> None:
        super().__init__(vocab, {"accuracy": CategoricalAccuracy()})
        self.embedding = torch.nn.EmbeddingBag(vocab.size("tokens"), dim, mode="mean", padding_idx=0)
        self.output = torch.nn.Linear(dim, vocab.size("labels"))

    def forward(self, tokens, label=None, **_):
        logits = self.output(self.embedding(get_token_ids_from_text_field_tensors(tokens)))
        output = {"logits": logits}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
            self.metrics["accuracy"](logits, label)
        return output
