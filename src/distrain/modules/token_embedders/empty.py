"""AllenNLP's ``empty``: ignore an indexer's tensors (a reader that indexes more than the model uses)."""

from __future__ import annotations

from typing import Any

from distrain.config.lazy import Lazy
from distrain.modules.token_embedder import TokenEmbedder


@TokenEmbedder.register("empty")
class EmptyEmbedder(TokenEmbedder):
    """Ignores its indexer's tensors (for a reader that indexes more than the model uses)."""

    output_dim = 0

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        return 0

    def forward(self, *inputs: Any, **named: Any) -> None:
        return None
