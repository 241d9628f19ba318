"""Seq2vec encoders: a (batch, length, dim) sequence and its mask in, one vector per item out."""

from __future__ import annotations

from typing import Annotated

import torch
from annotated_types import MinLen

from distrain.config.constraints import PositiveInt
from distrain.config.lazy import Lazy
from distrain.registry import Registrable


class Seq2VecEncoder(torch.nn.Module, Registrable):
    """``input_dim`` is supplied by the model (its embedding size); ``output_dim`` says what comes out."""

    default_implementation = "boe"
    runtime_args = ("input_dim",)
    output_dim: int

    @classmethod
    def input_dim_problem(cls, encoder: Lazy, input_dim: int) -> str | None:
        """Why the configured ``encoder`` (a recipe of ``cls``) cannot take ``input_dim`` (None: it can).

        ``input_dim`` comes from the model that owns the encoder, so the model's ``argument_problems``
        asks this when the config is validated.
        """
        return None

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError


@Seq2VecEncoder.register("boe")
class BagOfEmbeddings(Seq2VecEncoder):
    """Sum (or mean, with ``averaged``) of the unmasked embeddings."""

    def __init__(self, input_dim: int, averaged: bool = True) -> None:
        super().__init__()
        self.averaged = averaged
        self.output_dim = input_dim

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        weights = mask.unsqueeze(-1).to(inputs.dtype)
        summed = (inputs * weights).sum(1)
        if not self.averaged:
            return summed
        return summed / weights.sum(1).clamp(min=1.0)


@Seq2VecEncoder.register("cnn")
class CnnEncoder(Seq2VecEncoder):
    """Convolutions of several widths, max-pooled over time, concatenated."""

    def __init__(
        self, input_dim: int, num_filters: PositiveInt = 64,
        ngram_filter_sizes: Annotated[list[PositiveInt], MinLen(1)] = [2, 3, 4, 5],  # noqa: B006
    ) -> None:
        super().__init__()
        self.convolutions = torch.nn.ModuleList(
            torch.nn.Conv1d(input_dim, num_filters, size, padding=size - 1) for size in ngram_filter_sizes
        )
        self.output_dim = num_filters * len(ngram_filter_sizes)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        inputs = (inputs * mask.unsqueeze(-1).to(inputs.dtype)).transpose(1, 2)
        return torch.cat([torch.relu(conv(inputs)).max(dim=2).values for conv in self.convolutions], dim=1)


@Seq2VecEncoder.register("lstm")
class LstmEncoder(Seq2VecEncoder):
    """The final hidden state of a (bi)LSTM over the unpadded sequence."""

    def __init__(
        self, input_dim: int, hidden_size: PositiveInt = 128, num_layers: PositiveInt = 1, bidirectional: bool = False
    ) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(input_dim, hidden_size, num_layers, batch_first=True, bidirectional=bidirectional)
        self.output_dim = hidden_size * (2 if bidirectional else 1)

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = torch.nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True, enforce_sorted=False)
        _, (hidden, _) = self.lstm(packed)
        if self.lstm.bidirectional:
            return torch.cat([hidden[-2], hidden[-1]], dim=-1)
        return hidden[-1]
