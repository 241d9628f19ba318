"""The toolkit's ``LayerNorm``: torch's, reading the ``gamma``/``beta`` names older checkpoints (TF ports) use."""

from __future__ import annotations

import torch

from distrain.allennlp.modules.transformer.transformer_module import TransformerModule


class LayerNorm(torch.nn.LayerNorm, TransformerModule):
    _pretrained_mapping = {"gamma": "weight", "beta": "bias"}
