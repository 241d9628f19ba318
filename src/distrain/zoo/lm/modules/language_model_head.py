"""AllenNLP's ``LanguageModelHead`` (allennlp-models): what maps a language model's hidden states to logits over an
output vocabulary; ``next_token_lm`` and ``masked_language_model`` name one in their configs."""

from __future__ import annotations

import torch

from distrain.registry import Registrable


class LanguageModelHead(torch.nn.Module, Registrable):
    """``forward(hidden_states (..., input_dim))`` gives logits ``(..., output_dim)``."""

    input_dim: int
    output_dim: int

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError
