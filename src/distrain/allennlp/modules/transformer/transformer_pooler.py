"""``TransformerPooler``: the first position's vector through a linear map and an activation (BERT's pooler)."""

from __future__ import annotations

from typing import Any, Union

import torch

from distrain.allennlp.modules.transformer.activation_layer import ActivationLayer


class TransformerPooler(ActivationLayer):
    _pretrained_relevant_module = ["pooler", "bert.pooler", "roberta.pooler"]

    def __init__(self, hidden_size: int, intermediate_size: int, activation: Union[str, torch.nn.Module] = "relu"):
        super().__init__(hidden_size, intermediate_size, activation, pool=True)

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "TransformerPooler":
        # BERT's pooler is tanh of a square map, whatever the config's hidden activation
        return cls(**{"hidden_size": config.hidden_size, "intermediate_size": config.hidden_size,
                      "activation": "tanh", **kwargs})
