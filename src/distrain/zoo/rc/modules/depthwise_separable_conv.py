"""A depthwise separable 1-d convolution (QANet's): one filter per channel over the sequence, then a 1-wide
convolution mixing the channels, then ReLU; padded so the sequence keeps its length (an even kernel pads one
less on the right, as AllenNLP does)."""

from __future__ import annotations

import torch


class DepthwiseSeparableConv1d(torch.nn.Module):
    """(batch, timesteps, channels) in and out."""

    #: AllenNLP holds the two convolutions in a ``Sequential`` (padding, depthwise, pointwise, ReLU)
    allennlp_names = {"1": "depthwise", "2": "pointwise"}

    def __init__(self, channels: int, kernel_size: int) -> None:
        super().__init__()
        self.padding = (kernel_size // 2, (kernel_size - 1) // 2)
        self.depthwise = torch.nn.Conv1d(channels, channels, kernel_size, groups=channels)
        self.pointwise = torch.nn.Conv1d(channels, channels, 1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        padded = torch.nn.functional.pad(inputs.transpose(1, 2), self.padding)
        return torch.relu(self.pointwise(self.depthwise(padded))).transpose(1, 2)
