"""AllenNLP's ``gated-cnn-encoder`` (Dauphin et al., 2017): stacks of residual blocks of gated (GLU) convolutions,
one stack reading left to right and one right to left (each convolution padded so a position sees only its own
side), their outputs joined: ``2 * input_dim`` wide.

``layers`` lists the blocks, each a list of ``[kernel_width, output_dim]`` or ``[kernel_width, output_dim,
dilation]`` convolutions; a block's last ``output_dim`` must be ``input_dim`` (its input is added back, scaled by
sqrt(0.5)). ``return_all_layers`` returns every block's joined output instead of the last one.
"""

from __future__ import annotations

import math

import torch

from distrain.config.constraints import Probability
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder


class _GatedBlock(torch.nn.Module):
    def __init__(self, input_dim: int, layers: list[list[int]], forward_direction: bool, dropout: float) -> None:
        super().__init__()
        self.forward_direction, self.dropout = forward_direction, torch.nn.Dropout(dropout)
        self.convolutions, self.spans, width = torch.nn.ModuleList(), [], input_dim
        for layer in layers:
            kernel, output_dim, dilation = (list(layer) + [1])[:3]
            self.convolutions.append(torch.nn.utils.parametrizations.weight_norm(
                torch.nn.Conv1d(width, 2 * output_dim, kernel, dilation=dilation)))
            self.spans.append((kernel - 1) * dilation)
            width = output_dim
        if width != input_dim:
            raise ValueError(f"gated-cnn-encoder: a block ends {width} wide, but its input is {input_dim} wide")

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:  # (batch, dim, time)
        output = inputs
        for convolution, span in zip(self.convolutions, self.spans):
            padded = torch.nn.functional.pad(output, (span, 0) if self.forward_direction else (0, span))
            output = self.dropout(torch.nn.functional.glu(convolution(padded), dim=1))
        return (output + inputs) * math.sqrt(0.5)


@Seq2SeqEncoder.register("gated-cnn-encoder")
class GatedCnnEncoder(Seq2SeqEncoder):
    """Residual blocks of gated convolutions in both directions, joined (see the module doc)."""

    input_size_key = "input_dim"
    runtime_args = ()

    def __init__(self, input_dim: int, layers: list[list[list[int]]], dropout: Probability = 0.0,
                 return_all_layers: bool = False) -> None:
        super().__init__()
        self.forward_blocks = torch.nn.ModuleList(_GatedBlock(input_dim, block, True, dropout) for block in layers)
        self.backward_blocks = torch.nn.ModuleList(_GatedBlock(input_dim, block, False, dropout) for block in layers)
        self.input_dim, self.output_dim = input_dim, 2 * input_dim
        self.return_all_layers = return_all_layers

    def is_bidirectional(self) -> bool:
        return True

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | list[torch.Tensor]:
        keep = mask.unsqueeze(1).to(inputs.dtype)  # (batch, 1, time)
        forward = backward = inputs.transpose(1, 2) * keep
        layers = []
        for forward_block, backward_block in zip(self.forward_blocks, self.backward_blocks):
            forward, backward = forward_block(forward) * keep, backward_block(backward) * keep
            layers.append(torch.cat([forward, backward], dim=1).transpose(1, 2))
        return layers if self.return_all_layers else layers[-1]
