"""Words split into a transformer's word pieces, with each word's span (AllenNLP's
``pretrained_transformer_mismatched``): taggers keep one vector per word, not per piece."""

from __future__ import annotations

from typing import Any

import numpy as np

from distrain.config.constraints import PositiveInt
from distrain.data.field import ArrayField
from distrain.data.token_indexer import TokenIndexer, token_text
from distrain.data.token_indexers.pretrained_transformer import wordpiece_arrays
from distrain.errors import BadInput
from distrain.pretrained import PretrainedName, load_tokenizer


@TokenIndexer.register("pretrained_transformer_mismatched")
class PretrainedTransformerMismatchedIndexer(TokenIndexer):
    """Tensors ``token_ids``, ``type_ids`` and ``wordpiece_mask`` over the pieces (special tokens added),
    ``offsets`` (each word's first and last piece, inclusive) and ``mask`` over the words.

    ``max_length``: AllenNLP split longer piece sequences into segments; here a longer one is refused when the
    data is indexed, as by the ``pretrained_transformer`` indexer."""

    def __init__(self, model_name: PretrainedName, namespace: str = "tags", max_length: PositiveInt | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_name = model_name
        self.namespace = namespace
        self.max_length = max_length

    def tokens_to_indices(self, tokens: list[Any], vocab: Any) -> dict[str, ArrayField]:
        tokenizer = load_tokenizer(self.model_name)
        words = [token_text(token) for token in tokens]
        encoded = tokenizer(words, is_split_into_words=True, add_special_tokens=True)
        ids = list(encoded["input_ids"])
        if self.max_length is not None and len(ids) > self.max_length:
            raise BadInput(f"pretrained_transformer_mismatched indexer: {len(ids)} word pieces are more than its "
                           f"max_length {self.max_length}")
        offsets = np.zeros((len(words), 2), dtype=np.int64)  # a word with no piece points at the first special
        seen = np.zeros(len(words), dtype=bool)
        for position, word in enumerate(encoded.word_ids()):
            if word is None:
                continue
            if not seen[word]:
                offsets[word, 0], seen[word] = position, True
            offsets[word, 1] = position
        arrays = wordpiece_arrays(ids, list(encoded.get("token_type_ids") or [0] * len(ids)), tokenizer.pad_token_id or 0)
        arrays["wordpiece_mask"] = arrays.pop("mask")
        arrays["offsets"] = ArrayField(offsets, 0)
        arrays["mask"] = ArrayField(np.ones(len(words), dtype=bool), False)
        return arrays
