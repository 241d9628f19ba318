"""AllenNLP's ``DecoderNet``: what turns the embedded tokens decoded so far, the encoder's outputs and a state
into the next decoder output; ``auto_regressive_seq_decoder`` projects that output onto the target vocabulary.

``decodes_parallel`` nets (self-attention) read all previous steps at once, so teacher forcing runs them once
over the whole target; the others (an LSTM cell) read only the last step and carry a state.
"""

from __future__ import annotations

import torch

from distrain.registry import Registrable


class DecoderNet(torch.nn.Module, Registrable):
    def __init__(self, decoding_dim: int, target_embedding_dim: int, decodes_parallel: bool) -> None:
        super().__init__()
        self.decoding_dim = decoding_dim
        self.target_embedding_dim = target_embedding_dim
        self.decodes_parallel = decodes_parallel

    def get_output_dim(self) -> int:
        return self.decoding_dim

    def init_decoder_state(self, encoder_out: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The state the first step starts from (``{}`` for a net that keeps none)."""
        raise NotImplementedError

    def forward(self, previous_state: dict[str, torch.Tensor], encoder_outputs: torch.Tensor,
                source_mask: torch.Tensor, previous_steps_predictions: torch.Tensor,
                previous_steps_mask: torch.Tensor | None = None) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """``(new state, output)``: the output is ``(group, decoding_dim)`` for a stepwise net and
        ``(group, steps, decoding_dim)`` for a parallel one."""
        raise NotImplementedError
