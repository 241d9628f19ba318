"""The "transformer" seq2vec encoder: a vector per item that ignores padding."""

from __future__ import annotations

import torch

from distrain.modules.seq2vec_encoder import Seq2VecEncoder
from distrain.plugins import import_builtins


def test_transformer_encoder_output_ignores_padding():
    import_builtins()
    torch.manual_seed(0)
    encoder = Seq2VecEncoder.by_name("transformer")(input_dim=16, num_heads=4, dropout=0.0, max_length=8).eval()
    inputs = torch.randn(1, 5, 16)
    padded = torch.cat([inputs, torch.randn(1, 3, 16)], dim=1)
    mask = torch.tensor([[True] * 5 + [False] * 3])

    alone = encoder(inputs, torch.ones(1, 5, dtype=torch.bool))
    with_padding = encoder(padded, mask)

    assert encoder.output_dim == 16 and alone.shape == (1, 16)
    assert torch.allclose(alone, with_padding, atol=1e-5)
