"""What every classifier does with its logits: loss and metrics in training, labels in prediction."""

from __future__ import annotations

from typing import Any

import torch


class ClassifierOutputs:
    """Mixin for models with ``self.metrics``, ``self.vocab`` and ``self.label_namespace``."""

    def classify(self, logits: torch.Tensor, label: torch.Tensor | None) -> dict[str, torch.Tensor]:
        output = {"logits": logits}
        if label is not None:
            output["loss"] = torch.nn.functional.cross_entropy(logits, label)
            for metric in self.metrics.values():
                metric(logits, label)
        return output

    def make_output_human_readable(self, output: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
        probabilities = torch.softmax(output["logits"].float(), dim=-1)
        labels = self.vocab.tokens(self.label_namespace)
        return [
            {"label": labels[int(row.argmax())], "probs": [round(p, 6) for p in row.tolist()]}
            for row in probabilities
        ]
