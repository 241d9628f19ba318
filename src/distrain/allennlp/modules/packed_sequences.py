"""AllenNLP's recurrent modules take and give ``PackedSequence``s; distrain's run on a padded batch and its
mask. These turn one into the other, so the AllenNLP-named modules are thin front-ends over distrain's."""

from __future__ import annotations

import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from distrain.config.errors import ConfigError

TensorPair = tuple[torch.Tensor, torch.Tensor]


def unpack(inputs: PackedSequence) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The padded batch (batch first, in the caller's order), its boolean mask and its lengths."""
    if not isinstance(inputs, PackedSequence):
        raise ConfigError(f"inputs must be PackedSequence but got {type(inputs)}")
    padded, lengths = pad_packed_sequence(inputs, batch_first=True)
    mask = torch.arange(padded.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
    return padded, mask.to(padded.device), lengths


def repack(padded: torch.Tensor, lengths: torch.Tensor) -> PackedSequence:
    """``padded`` (batch first, the caller's order) packed again with the lengths it was unpacked with."""
    return pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)


def per_layer_states(states: TensorPair | None, layers: int) -> list[TensorPair | None]:
    """(hidden, memory), each (layers, batch, hidden), as one (batch, hidden) pair a layer; ``None`` each
    when no state is given. A first dimension other than ``layers`` is a ConfigError."""
    if not states:
        return [None] * layers
    if states[0].shape[0] != layers:
        raise ConfigError(f"Initial states were passed to forward() but the number of initial states "
                          f"({states[0].shape[0]}) does not match the number of layers ({layers}).")
    return list(zip(states[0].unbind(0), states[1].unbind(0)))


def stacked_states(finals: list[TensorPair]) -> TensorPair:
    """Final (hidden, memory) pairs, one a layer (or direction), stacked as PyTorch's (layers, batch, hidden)."""
    return torch.stack([hidden for hidden, _ in finals]), torch.stack([memory for _, memory in finals])
