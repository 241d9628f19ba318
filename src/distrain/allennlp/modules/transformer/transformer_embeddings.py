"""The toolkit's input embeddings: ``Embeddings`` (a sum of embedding layers, normalised), BERT's word, position and
token-type ``TransformerEmbeddings`` and ViLBERT's ``ImageFeatureEmbeddings``.

The layers sit in a ``ModuleDict`` named ``embeddings``, so a module of any modality is one sum over its inputs; the
mapping reads BERT's, RoBERTa's and ALBERT's names (ALBERT's projection from its small embeddings to the encoder's
width lives in the encoder there and is ``linear_transform`` here).
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.modules.transformer.layer_norm import LayerNorm
from distrain.allennlp.modules.transformer.transformer_module import TransformerModule


class Embeddings(TransformerModule, FromParams):
    """``dropout(layer_norm(sum of layer_i(input_i)))``: one input per layer of ``embeddings``, in its order; every
    layer (an embedding or a linear map) gives ``embedding_size`` wide vectors. The default ``layer_norm_eps``
    is BERT's 1e-12, not torch's."""

    def __init__(self, embeddings: torch.nn.ModuleDict, embedding_size: int, dropout: float,
                 layer_norm_eps: float = 1e-12):
        super().__init__()
        for name, layer in embeddings.named_children():
            if isinstance(layer, torch.nn.Embedding):
                assert layer.embedding_dim == embedding_size, f"{name} is {layer.embedding_dim} wide"
            elif isinstance(layer, torch.nn.Linear):
                assert layer.out_features == embedding_size, f"{name} is {layer.out_features} wide"
            else:
                raise TypeError(f'Layer "{name}" must be of type `torch.nn.Embedding` or `torch.nn.Linear`.')
        self.embeddings = embeddings
        self.layer_norm = LayerNorm(embedding_size, eps=layer_norm_eps)
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
        assert len(inputs) == len(self.embeddings), f"{len(self.embeddings)} inputs expected, got {len(inputs)}"
        total = sum(layer(values) for layer, values in zip(self.embeddings.children(), inputs))
        return self.dropout(self.layer_norm(total))


class ImageFeatureEmbeddings(Embeddings):
    """An image region's features and its box (4 coordinates), each mapped to ``embedding_size`` and summed."""

    def __init__(self, feature_size: int, embedding_size: int, dropout: float = 0.0):
        layers = torch.nn.ModuleDict({"image_embeddings": torch.nn.Linear(feature_size, embedding_size),
                                      "location_embeddings": torch.nn.Linear(4, embedding_size, bias=False)})
        super().__init__(layers, embedding_size, dropout)


class TransformerEmbeddings(Embeddings):
    """Word plus position plus token-type embeddings (BERT's); ``max_position_embeddings`` or ``type_vocab_size``
    of 0 leaves that layer out, ``output_size`` adds a linear map after the dropout (ALBERT's). With a
    ``position_pad_token_id`` (RoBERTa's), positions count from it + 1 and padding tokens get it."""

    _pretrained_relevant_module = ["embeddings", "bert.embeddings", "roberta.embeddings"]
    _pretrained_mapping = {
        "LayerNorm": "layer_norm",
        "word_embeddings": "embeddings.word_embeddings",
        "position_embeddings": "embeddings.position_embeddings",
        "token_type_embeddings": "embeddings.token_type_embeddings",
        "albert.embeddings.LayerNorm": "layer_norm",
        "albert.embeddings.word_embeddings": "embeddings.word_embeddings",
        "albert.embeddings.position_embeddings": "embeddings.position_embeddings",
        "albert.embeddings.token_type_embeddings": "embeddings.token_type_embeddings",
        "albert.encoder.embedding_hidden_mapping_in": "linear_transform",
    }
    _pretrained_ignore = [r"^albert\.pooler\..*", r"^albert\.encoder\.albert_layer_groups\..*", r"^predictions\.*"]

    def __init__(self, vocab_size: int, embedding_size: int, pad_token_id: int = 0, max_position_embeddings: int = 512,
                 position_pad_token_id: Optional[int] = None, type_vocab_size: int = 2, dropout: float = 0.1,
                 layer_norm_eps: float = 1e-12, output_size: Optional[int] = None):
        layers = {"word_embeddings": torch.nn.Embedding(vocab_size, embedding_size, padding_idx=pad_token_id)}
        if max_position_embeddings > 0:
            layers["position_embeddings"] = torch.nn.Embedding(max_position_embeddings, embedding_size,
                                                               padding_idx=position_pad_token_id)
        if type_vocab_size > 0:
            layers["token_type_embeddings"] = torch.nn.Embedding(type_vocab_size, embedding_size)
        super().__init__(torch.nn.ModuleDict(layers), embedding_size, dropout, layer_norm_eps=layer_norm_eps)
        if output_size:
            self.linear_transform = torch.nn.Linear(embedding_size, output_size)

    def _positions(self, input_ids: torch.Tensor, attention_mask: Optional[torch.Tensor]) -> torch.Tensor:
        steps = torch.arange(input_ids.shape[1], dtype=torch.long, device=input_ids.device).expand(input_ids.shape)
        pad = self.embeddings["position_embeddings"].padding_idx
        if pad is None:
            return steps
        if attention_mask is None:
            attention_mask = input_ids != self.embeddings["word_embeddings"].padding_idx
        return (steps + 1) * attention_mask + pad

    def forward(self, input_ids: torch.Tensor, token_type_ids: Optional[torch.Tensor] = None,  # type: ignore[override]
                position_ids: Optional[torch.Tensor] = None,
                attention_mask: Optional[torch.Tensor] = None) -> torch.Tensor:
        """``input_ids`` ``(batch, length)``; missing positions count from 0 (see the class), missing token
        types are 0; ``attention_mask`` only places a RoBERTa model's padding positions."""
        inputs = [input_ids]
        if "position_embeddings" in self.embeddings:
            inputs.append(position_ids if position_ids is not None else self._positions(input_ids, attention_mask))
        if "token_type_embeddings" in self.embeddings:
            inputs.append(token_type_ids if token_type_ids is not None else torch.zeros_like(input_ids))
        embedded = super().forward(*inputs)
        return self.linear_transform(embedded) if hasattr(self, "linear_transform") else embedded

    @classmethod
    def _from_config(cls, config: Any, **kwargs: Any) -> "TransformerEmbeddings":
        sizes = {"embedding_size": config.hidden_size}
        if hasattr(config, "embedding_size"):  # ALBERT: small embeddings, projected to the encoder's width
            sizes = {"embedding_size": config.embedding_size, "output_size": config.hidden_size}
        if config.model_type == "roberta":
            sizes["position_pad_token_id"] = config.pad_token_id
        return cls(**{"vocab_size": config.vocab_size, "pad_token_id": config.pad_token_id,
                      "max_position_embeddings": config.max_position_embeddings,
                      "type_vocab_size": config.type_vocab_size, "layer_norm_eps": config.layer_norm_eps,
                      **sizes, **kwargs})
