"""Word pieces of a pretrained tokenizer as the transformer's own ids (AllenNLP's ``pretrained_transformer``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.data.fields import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text
from distrain.pretrained import PretrainedName, load_tokenizer


@TokenIndexer.register("pretrained_transformer")
class PretrainedTransformerIndexer(TokenIndexer):
    """Tensors ``token_ids``, ``mask`` and ``type_ids`` for tokens that are already word pieces (from the
    ``pretrained_transformer`` tokenizer, special tokens included). The ids are the model's own, so the
    vocabulary is not consulted (``namespace`` is accepted for AllenNLP configs)."""

    def __init__(self, model_name: PretrainedName, namespace: str = "tags", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_name = model_name
        self.namespace = namespace

    @property
    def tokenizer(self) -> Any:
        return load_tokenizer(self.model_name)

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        ids = [token.text_id if getattr(token, "text_id", None) is not None
               else self.tokenizer.convert_tokens_to_ids(token_text(token)) for token in tokens]
        type_ids = [getattr(token, "type_id", None) or 0 for token in tokens]
        return wordpiece_arrays(ids, type_ids, self.tokenizer.pad_token_id or 0)


def wordpiece_arrays(ids: list[int], type_ids: list[int], pad: int) -> dict[str, ArrayField]:
    return {"token_ids": ArrayField(np.asarray(ids, dtype=np.int64), pad),
            "mask": ArrayField(np.ones(len(ids), dtype=bool), False),
            "type_ids": ArrayField(np.asarray(type_ids, dtype=np.int64), 0)}
