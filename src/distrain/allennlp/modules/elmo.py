"""``allennlp.modules.elmo``: ELMo, its biLM and its character encoder under AllenNLP's names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from distrain.modules.elmo import Elmo, ElmoBiLm, open_weights, read_options, remove_sentence_boundaries
from distrain.modules.elmo_character_encoder import ElmoCharacterEncoder

__all__ = [
    "Elmo", "_ElmoBiLm", "_ElmoCharacterEncoder", "remove_sentence_boundaries",
]


class _ElmoCharacterEncoder(torch.nn.Module):
    """The pretrained character CNN alone, read from ``options_file`` and ``weight_file``: ``(batch, tokens, 50)``
    character ids to ``{"token_embedding": (batch, tokens + 2, dim), "mask": (batch, tokens + 2)}``, the sentence
    boundaries added."""

    def __init__(self, options_file: str | Path, weight_file: str | Path, requires_grad: bool = False) -> None:
        super().__init__()
        options = read_options(options_file)
        self._encoder = ElmoCharacterEncoder(options["char_cnn"], options["lstm"]["projection_dim"], requires_grad)
        with open_weights(weight_file) as weights:
            self._encoder.load_weights(weights)

    def get_output_dim(self) -> int:
        return self._encoder.output_dim

    def forward(self, inputs: torch.Tensor) -> dict[str, Any]:
        vectors, mask = self._encoder(inputs)
        return {"mask": mask, "token_embedding": vectors}


class _ElmoBiLm(ElmoBiLm):
    """The pretrained biLM alone, as AllenNLP's code calls it: ``(batch, tokens, 50)`` character ids to
    ``{"activations": [each layer's (batch, tokens + 2, dim)], "mask": (batch, tokens + 2)}``."""

    def get_output_dim(self) -> int:
        return self.output_dim

    def get_num_layers(self) -> int:
        return self.num_layers

    def forward(self, inputs: torch.Tensor) -> dict[str, Any]:  # type: ignore[override]
        activations, mask = super().forward(inputs)
        return {"activations": activations, "mask": mask}
