"""ELMo's context-free token vectors: a character CNN, highway layers and a projection, reading the
50 character ids of the ``elmo_characters`` indexer.

Each sentence gets ``<S>`` and ``</S>`` around it here, not in the data, so the biLM sees the boundaries
it was trained with whatever the reader did. The weights are AllenNLP's (bilm-tf's) HDF5 layout,
converted as AllenNLP converts them: TensorFlow's ``x W`` matrices transposed, and the highway's carry
gate negated (TensorFlow gates the transform, AllenNLP the carry).
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.modules.elmo_characters import BEGIN_SENTENCE_IDS, END_SENTENCE_IDS
from distrain.modules.highway import Highway

#: character ids run from 1 to 261 (0 pads), so the table has 262 rows whatever the options say
CHARACTER_ROWS = 262

_ACTIVATIONS = {"relu": torch.nn.functional.relu, "tanh": torch.tanh}


class ElmoCharacterEncoder(torch.nn.Module):
    """``char_cnn`` is the options file's block of that name; ``output_dim`` its ``lstm.projection_dim``."""

    def __init__(self, char_cnn: dict[str, Any], output_dim: int, requires_grad: bool = False) -> None:
        super().__init__()
        if char_cnn["activation"] not in _ACTIVATIONS:
            raise ValueError(f"char_cnn.activation {char_cnn['activation']!r} is not one of {sorted(_ACTIVATIONS)}")
        self.activation = _ACTIVATIONS[char_cnn["activation"]]
        self.max_characters = char_cnn["max_characters_per_token"]
        embedding_dim = char_cnn["embedding"]["dim"]
        filters = char_cnn["filters"]
        n_filters = sum(number for _, number in filters)
        self.char_embedding = torch.nn.Parameter(torch.zeros(CHARACTER_ROWS, embedding_dim))
        self.convolutions = torch.nn.ModuleList(torch.nn.Conv1d(embedding_dim, number, width) for width, number in filters)
        self.highways = Highway(n_filters, char_cnn["n_highway"], activation=torch.nn.functional.relu)
        self.projection = torch.nn.Linear(n_filters, output_dim)
        self.output_dim = output_dim
        self.requires_grad_(requires_grad)

    def forward(self, character_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, tokens, 50) ids → vectors (batch, tokens + 2, output_dim) and their mask, with the
        sentence boundaries added."""
        # made here, not held as buffers: a model built on the meta device would leave buffers unset
        begin, end = (character_ids.new_tensor(ids) for ids in (BEGIN_SENTENCE_IDS, END_SENTENCE_IDS))
        ids, mask = add_sentence_boundaries(character_ids, begin, end)
        batch, tokens, _ = ids.shape
        embedded = torch.nn.functional.embedding(ids.reshape(-1, self.max_characters), self.char_embedding)
        embedded = embedded.transpose(1, 2)
        # AllenNLP's order: max over positions, then the activation (equal for relu and tanh, kept anyway)
        features = torch.cat([self.activation(conv(embedded).max(dim=-1).values) for conv in self.convolutions], -1)
        vectors = self.projection(self.highways(features))
        return vectors.reshape(batch, tokens, -1), mask

    @torch.no_grad()
    def load_weights(self, weights: Any) -> None:
        """Copy from an open h5py file of AllenNLP's ELMo weights."""
        table = torch.from_numpy(weights["char_embed"][...])
        _copy(self.char_embedding[1:], table[: CHARACTER_ROWS - 1], "char_embed")
        for index, conv in enumerate(self.convolutions):
            kernel = torch.from_numpy(weights["CNN"][f"W_cnn_{index}"][...]).squeeze(0).permute(2, 1, 0)
            _copy(conv.weight, kernel, f"CNN/W_cnn_{index}")
            _copy(conv.bias, torch.from_numpy(weights["CNN"][f"b_cnn_{index}"][...]), f"CNN/b_cnn_{index}")
        for index, layer in enumerate(self.highways.layers):
            group = weights[f"CNN_high_{index}"]
            transform, carry = (torch.from_numpy(group[name][...]) for name in ("W_transform", "W_carry"))
            _copy(layer.weight, torch.cat([transform.T, -carry.T]), f"CNN_high_{index}")
            transform, carry = (torch.from_numpy(group[name][...]) for name in ("b_transform", "b_carry"))
            _copy(layer.bias, torch.cat([transform, -carry]), f"CNN_high_{index}")
        _copy(self.projection.weight, torch.from_numpy(weights["CNN_proj"]["W_proj"][...]).T, "CNN_proj/W_proj")
        _copy(self.projection.bias, torch.from_numpy(weights["CNN_proj"]["b_proj"][...]), "CNN_proj/b_proj")


def _copy(target: torch.Tensor, source: torch.Tensor, name: str) -> None:
    if tuple(target.shape) != tuple(source.shape):
        raise ValueError(f"weight {name} has shape {tuple(source.shape)}; the options file needs {tuple(target.shape)}")
    target.copy_(source)


def add_sentence_boundaries(character_ids: torch.Tensor, begin: torch.Tensor,
                            end: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``begin`` before each sentence and ``end`` right after its last token (a token is real when
    any of its ids is not 0); the new mask marks real tokens and both boundaries."""
    batch, tokens, width = character_ids.shape
    lengths = character_ids.gt(0).any(-1).sum(-1)
    ids = character_ids.new_zeros(batch, tokens + 2, width)
    ids[:, 1:-1] = character_ids
    ids[:, 0] = begin
    ids[torch.arange(batch, device=ids.device), lengths + 1] = end
    return ids, ids.gt(0).any(-1)
