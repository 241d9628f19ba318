"""BERT's dynamic masking, made reproducible per sample.

Each token that may be masked (not special, not padding) is selected with ``probability``; a
selected token becomes [MASK] with probability ``mask_fraction``, a random token with
``random_fraction``, and stays itself otherwise (BERT: 15%; 80/10/10). Only selected tokens are
predicted.

The random draws for a sample come from a generator seeded by ``(seed, round, sample id)`` and
are drawn over the sample's own length, so a sample is masked the same way whichever worker holds
it and whatever else is in its batch: a 1-worker and an N-worker run with the same global batches
see identical masks. ``round`` changes every training batch, so masks differ between epochs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

IGNORE = -100


@dataclass(frozen=True)
class MaskingScheme:
    """What share of tokens is selected, and how the selected are replaced (the rest stay as they
    are). Its ranges are checked where it is configured, by ``transformer_masked_language_model``'s annotations."""

    probability: float = 0.15
    mask_fraction: float = 0.8
    random_fraction: float = 0.1


def sample_seed(seed: int, round_: int, sample_id: int) -> int:
    """A 63-bit seed from the three numbers (Python's tuple hash of ints is not randomised)."""
    return hash((seed, round_, sample_id)) & 0x7FFF_FFFF_FFFF_FFFF


def mask_tokens(
    token_ids: torch.Tensor,
    maskable: torch.Tensor,
    scheme: MaskingScheme,
    mask_token_id: int,
    random_token_ids: tuple[int, int],
    seeds: list[int] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(inputs, labels)``: masked copies of ``token_ids`` (batch × length) and the original id at
    each selected position (``-100`` elsewhere). ``random_token_ids`` is the ``[low, high)`` range
    random replacements are drawn from. With ``seeds`` (one per row) the draws are reproducible
    per row; without, they come from torch's global generator."""
    rows, width = token_ids.shape
    uniform = torch.ones(rows, width)  # 1.0: never selected (padding beyond a row's length)
    choice = torch.zeros(rows, width)
    random_ids = torch.zeros(rows, width, dtype=torch.long)
    low, high = random_token_ids
    if seeds is None:
        uniform, choice = torch.rand(rows, width), torch.rand(rows, width)
        random_ids = torch.randint(low, high, (rows, width))
    else:
        lengths = maskable.cpu().long().cumsum(1).argmax(1) + 1  # up to the last maskable token
        for row, (seed, length) in enumerate(zip(seeds, lengths.tolist())):
            generator = torch.Generator().manual_seed(seed)
            uniform[row, :length] = torch.rand(length, generator=generator)
            choice[row, :length] = torch.rand(length, generator=generator)
            random_ids[row, :length] = torch.randint(low, high, (length,), generator=generator)
    device = token_ids.device
    selected = (uniform.to(device) < scheme.probability) & maskable
    choice = choice.to(device)
    to_mask = selected & (choice < scheme.mask_fraction)
    to_random = selected & (choice >= scheme.mask_fraction) & (choice < scheme.mask_fraction + scheme.random_fraction)
    inputs = token_ids.clone()
    inputs[to_mask] = mask_token_id
    inputs[to_random] = random_ids.to(device)[to_random]
    labels = torch.where(selected, token_ids, torch.full_like(token_ids, IGNORE))
    return inputs, labels
