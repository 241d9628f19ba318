"""Word pieces of a pretrained tokenizer as the transformer's own ids (AllenNLP's ``pretrained_transformer``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.data.field import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text
from distrain.errors import BadInput
from distrain.pretrained import PretrainedName, load_tokenizer


@TokenIndexer.register("pretrained_transformer")
class PretrainedTransformerIndexer(TokenIndexer):
    """Tensors ``token_ids``, ``mask`` and ``type_ids`` for tokens that are already word pieces (from the
    ``pretrained_transformer`` tokenizer, special tokens included). The ids are the model's own, so the
    vocabulary is not consulted (``namespace`` is accepted for AllenNLP configs).

    ``max_length``: AllenNLP split a longer sequence into segments embedded one by one; here a longer
    sequence is refused when the data is indexed (a shorter one is embedded exactly as AllenNLP did: AllenNLP
    took its special tokens off and wrapped it again as one sequence, which keeps the ids but gives the end
    tokens a single sequence's type ids: a BERT pair's last [SEP] is type 0)."""

    def __init__(self, model_name: PretrainedName, namespace: str = "tags", max_length: PositiveInt | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_name = model_name
        self.namespace = namespace
        self.max_length = max_length

    @property
    def tokenizer(self) -> Any:
        return load_tokenizer(self.model_name)

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        ids = [token.text_id if getattr(token, "text_id", None) is not None
               else self.tokenizer.convert_tokens_to_ids(token_text(token)) for token in tokens]
        if self.max_length is not None and len(ids) > self.max_length:
            raise BadInput(f"pretrained_transformer indexer: {len(ids)} word pieces are more than its max_length "
                           f"{self.max_length} (AllenNLP split such a sequence into segments; distrain does not: "
                           "truncate with the tokenizer's max_length)")
        type_ids = [getattr(token, "type_id", None) or 0 for token in tokens]
        if self.max_length is not None:
            type_ids = self._rewrapped_type_ids(type_ids)
        return wordpiece_arrays(ids, type_ids, self.tokenizer.pad_token_id or 0)

    def _rewrapped_type_ids(self, type_ids: list[int]) -> list[int]:
        """``type_ids`` with the start and end tokens' those of a single sequence (AllenNLP's segment wrapping)."""
        from distrain.data.tokenizers.pretrained_transformer import special_token_template

        template = special_token_template(self.model_name, False)
        start, end = [t for _, _, t in template[0][0]], [t for _, _, t in template[-1][0]]
        if len(type_ids) < len(start) + len(end):
            return type_ids
        return start + type_ids[len(start):len(type_ids) - len(end)] + end


def wordpiece_arrays(ids: list[int], type_ids: list[int], pad: int) -> dict[str, ArrayField]:
    return {"token_ids": ArrayField(np.asarray(ids, dtype=np.int64), pad),
            "mask": ArrayField(np.ones(len(ids), dtype=bool), False),
            "type_ids": ArrayField(np.asarray(type_ids, dtype=np.int64), 0)}
