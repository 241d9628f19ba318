"""A pretrained (WordPiece / BPE / SentencePiece) tokenizer: text in, the model's own token ids out.

Its ids index the pretrained embedding matrix directly, so its fields bypass the vocabulary.
"""

from __future__ import annotations

from distrain.config.constraints import PositiveInt
from distrain.data.fields import Field, TokenIdsField
from distrain.data.tokenizer import Token, Tokenizer
from distrain.pretrained import PretrainedName, load_tokenizer


@Tokenizer.register("pretrained_transformer")
class PretrainedTransformerTokenizer(Tokenizer):
    """``max_length`` counts the special tokens ([CLS] ... [SEP]) added with ``add_special_tokens``."""

    def __init__(
        self, model_name: PretrainedName, max_length: PositiveInt | None = 512, add_special_tokens: bool = True
    ) -> None:
        self.model_name = model_name
        self.max_length = max_length
        self.add_special_tokens = add_special_tokens

    @property
    def tokenizer(self):
        return load_tokenizer(self.model_name)

    def ids(self, text: str) -> list[int]:
        encoded = self.tokenizer(
            text,
            add_special_tokens=self.add_special_tokens,
            truncation=self.max_length is not None,
            max_length=self.max_length,
        )
        return list(encoded["input_ids"])

    def tokenize(self, text: str) -> list[str]:
        return self.tokenizer.convert_ids_to_tokens(self.ids(text))

    def to_field(self, text: str, namespace: str = "tokens") -> Field:
        return TokenIdsField(self.ids(text), pad_value=self.tokenizer.pad_token_id or 0)

    def pair_tokens(self, first: str, second: str) -> list[Token]:
        """Two texts as one sequence with the tokenizer's own pair encoding (BERT's ``[CLS] a [SEP] b [SEP]``
        with type ids 0 and 1, RoBERTa's ``<s> a </s></s> b </s>``), truncated longest-first to ``max_length``;
        each token carries its id, so indexers need no vocabulary."""
        encoded = self.tokenizer(first, second, add_special_tokens=True, truncation=self.max_length is not None,
                                 max_length=self.max_length)
        ids = list(encoded["input_ids"])
        types = list(encoded.get("token_type_ids") or [0] * len(ids))
        texts = self.tokenizer.convert_ids_to_tokens(ids)
        return [Token(text, text_id=i, type_id=t) for text, i, t in zip(texts, ids, types)]
