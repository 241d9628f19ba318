"""TextFieldEmbedder: a text field's tensors (``{indexer: {name: tensor}}``) in, one vector per token out.

``basic`` (AllenNLP's default) runs one token embedder per indexer, named alike, and concatenates their
outputs in sorted name order. :func:`get_text_field_mask` is AllenNLP's mask rule for such tensors.
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping

import torch

from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.modules.sizes import OutputWidth, output_dim
from distrain.modules.token_embedder import TokenEmbedder
from distrain.registry import Registrable

#: what a model's ``forward`` receives for an indexed text field
TextFieldTensors = dict[str, dict[str, torch.Tensor]]


class TextFieldEmbedder(torch.nn.Module, OutputWidth, Registrable):
    default_implementation = "basic"


@TextFieldEmbedder.register("basic")
class BasicTextFieldEmbedder(TextFieldEmbedder):
    """``token_embedders`` maps indexer names (the reader's ``token_indexers`` keys) to embedders."""

    def __init__(self, token_embedders: dict[str, TokenEmbedder]) -> None:
        super().__init__()
        if not token_embedders:
            raise ValueError("token_embedders needs at least one embedder")
        self.names = sorted(token_embedders)
        for name in self.names:
            self.add_module(f"token_embedder_{name}", token_embedders[name])
        self.output_dim = sum(token_embedders[name].get_output_dim() for name in self.names)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        embedders = arguments["token_embedders"]
        return [Problem("token_embedders", "needs at least one embedder")] if not embedders else []

    @classmethod
    def configured_output_dim(cls, recipe: Lazy, input_dim: int | None = None) -> int | None:
        widths = [output_dim(embedder) for embedder in (recipe.parts.get("token_embedders") or {}).values()]
        return None if not widths or None in widths else sum(widths)

    def embedder(self, name: str) -> TokenEmbedder:
        return getattr(self, f"token_embedder_{name}")

    def forward(self, text: TextFieldTensors, num_wrapping_dims: int = 0, **kwargs: Any) -> torch.Tensor:
        """``num_wrapping_dims`` leading dimensions past the batch (a ``ListField`` of text fields: ``(batch, n,
        length)``) are folded into the batch for each embedder, as AllenNLP's ``TimeDistributed`` wrapping does;
        ``kwargs`` reach the embedders whose ``forward`` names them, as in AllenNLP."""
        from distrain.modules.token_embedders.empty import EmptyEmbedder

        # an empty embedder may go without its indexer (AllenNLP's rule: a language model embedder feeds one indexer)
        missing = [name for name in self.names if name not in text and not isinstance(self.embedder(name), EmptyEmbedder)]
        if missing:
            raise ValueError(f"token_embedders {missing} have no indexer of that name; the field has {sorted(text)}")
        outputs = []
        for name in (name for name in self.names if name in text):
            embedder, tensors = self.embedder(name), text[name]
            accepted = inspect.signature(embedder.forward).parameters
            takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
            given = {key: value for key, value in tensors.items() if takes_any or key in accepted}
            extras = {key: value for key, value in kwargs.items() if key in accepted and key not in given}
            if len(given) != len(tensors) and len(tensors) == 1 and len(set(accepted) - set(extras)) == 1:
                given = {next(name for name in accepted if name not in extras): next(iter(tensors.values()))}
            vectors = _wrapped(embedder, num_wrapping_dims)(**given, **extras)
            if vectors is not None:
                outputs.append(vectors)
        return torch.cat(outputs, dim=-1)


def _wrapped(embedder: torch.nn.Module, num_wrapping_dims: int) -> torch.nn.Module:
    """``embedder`` inside ``num_wrapping_dims`` :class:`TimeDistributed` layers (itself for 0)."""
    from distrain.modules.time_distributed import TimeDistributed

    for _ in range(num_wrapping_dims):
        embedder = TimeDistributed(embedder)
    return embedder


def get_text_field_mask(text_field_tensors: TextFieldTensors, num_wrapping_dims: int = 0,
                        padding_id: int = 0) -> torch.Tensor:
    """True at real tokens: an indexer's own ``mask`` if it has one, else the ids (or, for characters,
    any character) that are not ``padding_id``."""
    for tensors in text_field_tensors.values():
        if "mask" in tensors:
            return tensors["mask"].bool()
    tensors = [tensor for indexed in text_field_tensors.values() for tensor in indexed.values()]
    smallest = min(tensor.dim() for tensor in tensors)
    tensor = next(tensor for tensor in tensors if tensor.dim() == smallest)
    if smallest == 2 + num_wrapping_dims:
        return tensor != padding_id
    if smallest == 3 + num_wrapping_dims:
        return (tensor != padding_id).any(dim=-1)
    raise ValueError(f"cannot make a mask from tensors of {smallest} dimensions")


def get_token_ids_from_text_field_tensors(text_field_tensors: TextFieldTensors) -> torch.Tensor:
    """The token ids among a text field's tensors (AllenNLP's: the first indexer's ``tokens``, ``token_ids`` or
    ``input_ids``): a model of one text field's words reads them with this."""
    for tensors in text_field_tensors.values():
        for name in ("tokens", "token_ids", "input_ids"):
            if name in tensors:
                return tensors[name]
    raise ValueError(f"no token ids among the text field's tensors {sorted(text_field_tensors)}")
