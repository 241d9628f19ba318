"""allennlp-models' ``BeamSearchGenerator``: the beam search of ``next_token_lm``, which knows how the model's text
field tensors become a beam search's state and how a predicted word extends them (that depends on the embedder:
one generator per kind of embedder)."""

from __future__ import annotations

from typing import Any

import torch

from distrain.modules.beam_search import BeamSearch, StepFunction
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors
from distrain.registry import Registrable


class BeamSearchGenerator(Registrable):
    """``beam_search`` gives its own ``end_index`` (no model names an end symbol here)."""

    def __init__(self, beam_search: BeamSearch) -> None:
        self.beam_search = beam_search

    def validate_text_field_embedder(self, text_field_embedder: TextFieldEmbedder) -> None:
        """Raise ``ValueError`` unless the model's embedder is one this generator can extend."""
        raise NotImplementedError

    def get_step_state(self, inputs: TextFieldTensors) -> dict[str, torch.Tensor]:
        """The state of a text field of one indexer: a copy of that indexer's tensors."""
        if len(inputs) != 1:
            raise ValueError(f"a beam search state is one indexer's tensors; this text field has {sorted(inputs)}")
        return dict(next(iter(inputs.values())))

    def prepare_step_input(self, predictions: torch.Tensor, state: dict[str, Any]) -> TextFieldTensors:
        """The text field tensors of the state's sentences with ``predictions`` appended."""
        raise NotImplementedError

    def search(self, start_predictions: torch.Tensor, state: dict[str, Any],
               step: StepFunction) -> tuple[torch.Tensor, torch.Tensor]:
        """``(top indices (batch, beam, steps), their summed log-probabilities (batch, beam))``."""
        return self.beam_search.search(start_predictions, state, step)
