"""TokenEmbedder base: one indexer's tensors in, a vector per token out (AllenNLP's contract).

A text-field embedder holds one token embedder per indexer, under the indexer's name, and
concatenates what they give; ``configured_output_dim`` lets the config's sizes be checked before
anything is built.
"""

from __future__ import annotations

import torch

from distrain.modules.sizes import OutputWidth
from distrain.registry import Registrable


class TokenEmbedder(torch.nn.Module, OutputWidth, Registrable):
    default_implementation = "embedding"
