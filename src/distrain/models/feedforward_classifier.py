"""Classifier over a dense feature vector (e.g. the 64 pixels of a digits image)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.classification import ClassifierOutputs
from distrain.models.model import Model
from distrain.config.lazy import Lazy
from distrain.modules.feedforward import FeedForward


@Model.register("feedforward_classifier")
class FeedForwardClassifier(ClassifierOutputs, Model):
    """Label logits from a dense feature vector through an optional feed-forward stack."""

    def __init__(
        self,
        vocab: Vocabulary,
        input_dim: PositiveInt,
        feedforward: Lazy[FeedForward] | None = None,
        feature_scale: float = 1.0,
        label_namespace: str = "labels",
        metrics: dict[str, Metric] | None = None,
    ) -> None:
        super().__init__(vocab, metrics if metrics is not None else {"accuracy": CategoricalAccuracy()})
        self.label_namespace = label_namespace
        self.use_label_names(label_namespace)
        self.feature_scale = feature_scale
        self.feedforward = feedforward.construct(input_dim=input_dim) if feedforward else None
        width = self.feedforward.output_dim if self.feedforward else input_dim
        self.output = torch.nn.Linear(width, vocab.size(label_namespace))

    def pipeline_units(self) -> list[str]:
        """The feed-forward stack's layers (linear, activation, dropout) and the output layer."""
        stack = [f"feedforward.layers.{index}" for index in range(len(self.feedforward.layers))] if self.feedforward else []
        return stack + ["output"]

    def pipeline_inputs(self, features: torch.Tensor, **_: Any) -> tuple[torch.Tensor, ...]:
        return (features * self.feature_scale if self.feature_scale != 1.0 else features,)

    def pipeline_loss(self, outputs: tuple[torch.Tensor, ...], label: torch.Tensor) -> torch.Tensor:
        return self.classify(outputs[0], label)["loss"]

    def forward(self, features: torch.Tensor, label: torch.Tensor | None = None, **_: Any) -> dict[str, torch.Tensor]:
        hidden = features * self.feature_scale if self.feature_scale != 1.0 else features
        if self.feedforward is not None:
            hidden = self.feedforward(hidden)
        logits = self.output(hidden)
        return self.classify(logits, label)
