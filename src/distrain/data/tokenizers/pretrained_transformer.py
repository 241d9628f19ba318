"""A pretrained (WordPiece / BPE / SentencePiece) tokenizer: text in, the model's own token ids out.

Its ids index the pretrained embedding matrix directly, so its fields bypass the vocabulary.
"""

from __future__ import annotations

from functools import lru_cache

from distrain.config.constraints import PositiveInt
from distrain.data.fields import Field, TokenIdsField
from distrain.data.tokenizer import Token, Tokenizer
from distrain.pretrained import PretrainedName, load_tokenizer


@Tokenizer.register("pretrained_transformer")
class PretrainedTransformerTokenizer(Tokenizer):
    """``max_length`` counts the special tokens ([CLS] ... [SEP]) added with ``add_special_tokens``.

    As in AllenNLP, ``tokenize`` gives :class:`Token` records (each with its id) and ``add_special_tokens(first,
    second=None)`` is a method, wrapping already tokenized pieces in the model's template (a question and its
    passage); the config's ``add_special_tokens`` flag is kept as ``adds_special_tokens``.
    """

    def __init__(
        self, model_name: PretrainedName, max_length: PositiveInt | None = 512, add_special_tokens: bool = True
    ) -> None:
        self.model_name = model_name
        self.max_length = max_length
        self.adds_special_tokens = add_special_tokens

    @property
    def tokenizer(self):
        return load_tokenizer(self.model_name)

    def ids(self, text: str) -> list[int]:
        encoded = self.tokenizer(
            text,
            add_special_tokens=self.adds_special_tokens,
            truncation=self.max_length is not None,
            max_length=self.max_length,
        )
        return list(encoded["input_ids"])

    def tokenize(self, text: str) -> list[Token]:  # type: ignore[override]
        """AllenNLP's ``tokenize``: :meth:`tokens`."""
        return self.tokens(text)

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

    def tokens(self, text: str) -> list[Token]:
        """``text``'s word pieces, each with its id and type id (special tokens as ``add_special_tokens``
        says), truncated to ``max_length``."""
        encoded = self.tokenizer(text, add_special_tokens=self.adds_special_tokens,
                                 truncation=self.max_length is not None, max_length=self.max_length)
        return self._records(list(encoded["input_ids"]), list(encoded.get("token_type_ids") or []))

    def with_special_tokens(self, first: list[Token | str], second: list[Token | str] | None = None) -> list[Token]:
        """AllenNLP's ``add_special_tokens``: the tokenizer's own template around already tokenized pieces
        (``[CLS] a [SEP] b [SEP]``), the type ids as the template sets them (overriding the pieces'); nothing
        is truncated. A piece given as a string (or a token without an id) is looked up in the tokenizer's
        vocabulary."""
        template = special_token_template(self.model_name, second is not None)
        pieces = [list(first)] + ([] if second is None else [list(second)])
        tokens: list[Token] = []
        for (specials, type_id), part in zip(template, pieces + [[]]):
            tokens += [Token(text, text_id=i, type_id=t) for text, i, t in specials]
            tokens += [self._piece(piece, type_id) for piece in part]
        return tokens

    def add_special_tokens(self, tokens1: list[Token | str], tokens2: list[Token | str] | None = None) -> list[Token]:
        """AllenNLP's name for :meth:`with_special_tokens`."""
        return self.with_special_tokens(tokens1, tokens2)

    def _piece(self, piece: Token | str, type_id: int) -> Token:
        text = piece if isinstance(piece, str) else piece.text
        known = None if isinstance(piece, str) else piece.text_id
        idx = None if isinstance(piece, str) else piece.idx
        text_id = known if known is not None else self.tokenizer.convert_tokens_to_ids(text)
        return Token(text, idx=idx, text_id=text_id, type_id=type_id)

    def _records(self, ids: list[int], types: list[int]) -> list[Token]:
        types = types or [0] * len(ids)
        texts = self.tokenizer.convert_ids_to_tokens(ids)
        return [Token(text, text_id=i, type_id=t) for text, i, t in zip(texts, ids, types)]


@lru_cache(maxsize=None)
def special_token_template(model_name: str, pair: bool) -> list[tuple[list[tuple[str, int, int]], int]]:
    """The special tokens (text, id, type id) the tokenizer puts before each sequence and after the last,
    each with the type id of the sequence that follows it: found as AllenNLP found them, by encoding the
    one-piece texts ``a`` and ``b`` (transformers 5 no longer exposes its templates as methods)."""
    tokenizer = load_tokenizer(model_name)
    dummies = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in ("a", "b")]
    if any(len(ids) != 1 for ids in dummies) or dummies[0] == dummies[1]:
        raise ValueError(f"{model_name}: cannot find its special tokens ('a' and 'b' are not one piece each)")
    encoded = tokenizer(*(["a", "b"] if pair else ["a"]), add_special_tokens=True)
    ids = list(encoded["input_ids"])
    types = list(encoded.get("token_type_ids") or [0] * len(ids))
    texts = tokenizer.convert_ids_to_tokens(ids)
    template, start = [], 0
    for dummy in dummies[: 2 if pair else 1]:
        position = ids.index(dummy[0], start)
        template.append(([(texts[i], ids[i], types[i]) for i in range(start, position)], types[position]))
        start = position + 1
    template.append(([(texts[i], ids[i], types[i]) for i in range(start, len(ids))], types[-1] if ids else 0))
    return template
