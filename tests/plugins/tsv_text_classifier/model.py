"""Embed a text's words, pool them into one vector, score each label from it."""

from typing import Any, Dict, Optional

import torch

from distrain.allennlp import (CategoricalAccuracy, Model, Seq2VecEncoder, TextFieldEmbedder, TextFieldTensors,
                               Vocabulary, util)


@Model.register("pooled_text_classifier")
class PooledTextClassifier(Model):
    """One label per text from its pooled embeddings; ``dropout`` on the pooled vector, accuracy as the metric."""

    default_predictor = "text_label"  # what Predictor.from_path picks when it is given no name

    def __init__(self, vocab: Vocabulary, embedder: TextFieldEmbedder, pooler: Seq2VecEncoder,
                 dropout: float = 0.0) -> None:
        super().__init__(vocab)
        self.embedder = embedder
        self.pooler = pooler
        self.dropout = torch.nn.Dropout(dropout)
        self.scores = torch.nn.Linear(pooler.get_output_dim(), vocab.get_vocab_size("labels"))
        self.accuracy = CategoricalAccuracy()

    def forward(self, words: TextFieldTensors, label: Optional[torch.Tensor] = None) -> Dict[str, torch.Tensor]:
        pooled = self.pooler(self.embedder(words), util.get_text_field_mask(words))
        logits = self.scores(self.dropout(pooled))
        output = {"probs": logits.softmax(dim=-1)}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
            self.accuracy(logits, label)
        return output

    def make_output_human_readable(self, output: Dict[str, torch.Tensor]) -> Dict[str, Any]:
        """Per text, what ``distrain predict`` writes and the predictor reads: the probabilities, the most
        probable label by name and its probability (the batch's loss is no text's, so it is left out)."""
        probability, best = output["probs"].max(dim=-1)
        labels = [self.vocab.get_token_from_index(int(index), "labels") for index in best]
        return {"probs": output["probs"], "label": labels, "probability": probability}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"accuracy": self.accuracy.get_metric(reset)}
