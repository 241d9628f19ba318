"""allennlp-models' ``transformer`` beam search generator: for a ``next_token_lm`` whose embedder is one
``pretrained_transformer``, a predicted word piece goes in at each sentence's first padding position (after its
last real piece, its end token included, as in AllenNLP), the mask grows by one real position and the type ids by a
copy of the last one."""

from __future__ import annotations

from typing import Any

import torch

from distrain.modules.beam_search import BeamSearch
from distrain.modules.text_field_embedder import BasicTextFieldEmbedder, TextFieldEmbedder, TextFieldTensors
from distrain.modules.token_embedders.pretrained_transformer import PretrainedTransformerEmbedder
from distrain.zoo.lm.modules.beam_search_generator import BeamSearchGenerator


@BeamSearchGenerator.register("transformer")
class TransformerBeamSearchGenerator(BeamSearchGenerator):
    """``namespace`` is the indexer's name; the model's embedder sets it when it is validated."""

    def __init__(self, beam_search: BeamSearch, namespace: str | None = None) -> None:
        super().__init__(beam_search)
        self.namespace = namespace

    def validate_text_field_embedder(self, text_field_embedder: TextFieldEmbedder) -> None:
        embedders = getattr(text_field_embedder, "names", [])
        if not isinstance(text_field_embedder, BasicTextFieldEmbedder) or len(embedders) != 1 or not isinstance(
                text_field_embedder.embedder(embedders[0]), PretrainedTransformerEmbedder):
            raise ValueError("the transformer beam search generator needs a text_field_embedder of one "
                             "pretrained_transformer token embedder")
        self.namespace = embedders[0]

    def prepare_step_input(self, predictions: torch.Tensor, state: dict[str, Any]) -> TextFieldTensors:
        if self.namespace is None:
            raise ValueError("the token embedder's name is unknown: validate_text_field_embedder was not called")
        token_ids, mask = state["token_ids"], state["mask"].bool()
        lengths = mask.sum(dim=-1)  # real positions come first: the first padding position is the length
        rows = torch.arange(token_ids.shape[0], device=token_ids.device)
        before = torch.arange(token_ids.shape[1] + 1, device=token_ids.device).unsqueeze(0) < lengths.unsqueeze(1)

        def grown(values: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
            """``values`` one position longer: the same before the length, ``new`` there, shifted right after."""
            kept = torch.cat([values, values[:, -1:]], dim=-1)
            shifted = torch.cat([values[:, :1], values], dim=-1)
            result = torch.where(before, kept, shifted)
            result[rows, lengths] = new.to(values.dtype)
            return result

        type_ids = state.pop("type_ids")
        state["token_ids"] = grown(token_ids, predictions)
        state["mask"] = grown(mask, torch.ones_like(predictions, dtype=torch.bool))
        state["type_ids"] = torch.cat([type_ids, type_ids[:, -1:]], dim=-1)
        return {self.namespace: state}
