"""``InputVariationalDropout``: dropout whose mask is drawn once per sequence and shared by all its steps.

Recurrent models (AllenNLP's taggers and parsers) drop the same features at every time step, so the noise does
not average out along the sequence. Input ``(batch, steps, features)``; on 2-d input it is plain dropout.
"""

from __future__ import annotations

import torch

from distrain.modules.augmented_lstm import variational_dropout


class InputVariationalDropout(torch.nn.Dropout):
    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.dim() < 3:
            return super().forward(inputs)
        dropped = variational_dropout(inputs, self.p, self.training)
        return dropped if not self.inplace else inputs.copy_(dropped)
