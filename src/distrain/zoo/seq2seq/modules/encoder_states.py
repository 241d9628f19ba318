"""Where a decoder starts: the encoder's output at each sequence's last unmasked position."""

from __future__ import annotations

import torch


def final_encoder_states(encoder_outputs: torch.Tensor, mask: torch.Tensor, bidirectional: bool = False) -> torch.Tensor:
    """``(batch, width)``: the last real position's output; ``bidirectional`` takes the forward half there and
    the backward half at position 0, where the backward direction ends (AllenNLP's ``get_final_encoder_states``)."""
    last = (mask.long().sum(1) - 1).clamp(min=0)
    batch, _, width = encoder_outputs.shape
    final = encoder_outputs.gather(1, last.view(-1, 1, 1).expand(batch, 1, width)).squeeze(1)
    if bidirectional:
        final = torch.cat([final[:, : width // 2], encoder_outputs[:, 0, width // 2:]], dim=-1)
    return final
