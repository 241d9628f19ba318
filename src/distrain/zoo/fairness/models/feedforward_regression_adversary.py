"""``feedforward_regression_adversary``: the adversary of ``adversarial_bias_mitigator``, a feed-forward network
regressing the protected variable from the predictor's outputs."""

from __future__ import annotations

import torch

from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.modules.feedforward import FeedForward


@Model.register("feedforward_regression_adversary")
class FeedForwardRegressionAdversary(Model):
    """A feed-forward network regressing ``label`` from ``input``, by mean squared error (AllenNLP's
    ``FeedForwardRegressionAdversary``)."""

    def __init__(self, vocab: Vocabulary, feedforward: FeedForward) -> None:
        super().__init__(vocab)
        self._feedforward = feedforward

    def forward(self, input: torch.Tensor, label: torch.Tensor) -> dict[str, torch.Tensor]:  # noqa: A002 - AllenNLP's
        return {"loss": torch.nn.functional.mse_loss(self._feedforward(input), label)}
