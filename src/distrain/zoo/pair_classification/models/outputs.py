"""What the pair classifiers share: their label logits and probabilities under AllenNLP's names beside distrain's
``logits``, the loss and accuracy, and the mean and max over a sequence's unpadded steps."""

from __future__ import annotations

from typing import Any

import torch

from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.models.classification import ClassifierOutputs


class PairClassifierOutputs(ClassifierOutputs):
    """Mixin: ``self.metrics`` is AllenNLP's one ``accuracy``; labels live in the ``labels`` namespace."""

    label_namespace = "labels"
    #: the predictor an archive answers with when none is named (AllenNLP's, for its pair models)
    default_predictor = "textual_entailment"

    @staticmethod
    def default_metrics() -> dict[str, Any]:
        return {"accuracy": CategoricalAccuracy()}

    def label_outputs(self, logits: torch.Tensor, label: torch.Tensor | None) -> dict[str, torch.Tensor]:
        output = self.classify(logits, label.long().view(-1) if label is not None else None)
        output["label_logits"] = logits
        output["label_probs"] = torch.softmax(logits, dim=-1)
        return output

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """AllenNLP's form: the forward pass's outputs with each item's ``label`` (the most probable); distrain's
        ``logits`` left out where the model names them ``label_logits``, as AllenNLP's pair models do."""
        readable = {key: value for key, value in output.items() if not (key == "logits" and "label_logits" in output)}
        probabilities = output.get("label_probs", output["logits"])
        labels = self.vocab.tokens(self.label_namespace)
        readable["label"] = [labels[int(index)] for index in probabilities.argmax(dim=-1)]
        return readable


def masked_mean(sequence: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, steps, d) → (batch, d): the mean over unpadded steps (AllenNLP's ESIM divides the same way)."""
    mask = mask.to(sequence.dtype)
    return (sequence * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)


def masked_max(sequence: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(batch, steps, d) → (batch, d): the max over unpadded steps (padding filled with the dtype's minimum)."""
    filled = sequence.masked_fill(~mask.bool().unsqueeze(-1), torch.finfo(sequence.dtype).min)
    return filled.max(dim=1).values
