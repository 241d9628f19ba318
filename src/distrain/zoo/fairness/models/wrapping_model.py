"""The base of the fairness models that wrap another model: their metrics, readable outputs and prediction inputs
are the wrapped model's (AllenNLP's mitigators delegate these by hand)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.models.model import Model


class WrappingModel(Model):
    """A model whose attribute :attr:`wrapped_name` holds the model it answers for."""

    wrapped_name = ""

    @property
    def wrapped(self) -> Model:
        return getattr(self, self.wrapped_name)

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return self.wrapped.get_metrics(reset)

    def make_output_human_readable(self, output: dict[str, torch.Tensor]) -> Any:
        return self.wrapped.make_output_human_readable(output)

    def prediction_reader(self, reader: Any) -> Any:
        return self.wrapped.prediction_reader(reader)
