"""Embed, encode to one vector, classify: an AllenNLP model (see the package docstring)."""

from typing import Dict

import torch

from distrain.allennlp import (CategoricalAccuracy, Model, Seq2VecEncoder, TextFieldEmbedder, TextFieldTensors,
                               Vocabulary, util)


@Model.register("simple_classifier")
class SimpleClassifier(Model):
    def __init__(self, vocab: Vocabulary, embedder: TextFieldEmbedder, encoder: Seq2VecEncoder):
        super().__init__(vocab)
        self.embedder = embedder
        self.encoder = encoder
        self.classifier = torch.nn.Linear(encoder.get_output_dim(), vocab.get_vocab_size("labels"))
        self.accuracy = CategoricalAccuracy()

    def forward(self, text: TextFieldTensors, label: torch.Tensor = None) -> Dict[str, torch.Tensor]:
        mask = util.get_text_field_mask(text)
        logits = self.classifier(self.encoder(self.embedder(text), mask))
        output = {"probs": torch.nn.functional.softmax(logits, dim=-1)}
        if label is not None:
            self.accuracy(logits, label)
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
        return output

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self.accuracy.get_metric(reset)}
