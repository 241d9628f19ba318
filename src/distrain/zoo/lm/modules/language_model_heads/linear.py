"""AllenNLP's ``linear`` language-model head: one linear layer onto a vocabulary namespace (its tests' head)."""

from __future__ import annotations

import torch

from distrain.config.constraints import PositiveInt
from distrain.data.vocabulary import Vocabulary
from distrain.zoo.lm.modules.language_model_head import LanguageModelHead


@LanguageModelHead.register("linear")
class LinearLanguageModelHead(LanguageModelHead):
    """Logits over every entry of ``vocab_namespace`` (padding and unknown included), from ``input_dim`` wide
    hidden states."""

    #: the model's vocabulary reaches it when the model is built
    runtime_args = ("vocab",)

    def __init__(self, vocab: Vocabulary, input_dim: PositiveInt, vocab_namespace: str) -> None:
        super().__init__()
        self.input_dim = input_dim
        self.output_dim = vocab.get_vocab_size(vocab_namespace)
        if self.output_dim <= 0:
            raise ValueError("We can't embed into an empty vocabulary.")
        self.linear = torch.nn.Linear(input_dim, self.output_dim)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return self.linear(hidden_states)
