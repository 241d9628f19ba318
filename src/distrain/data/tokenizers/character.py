"""AllenNLP's ``character`` tokenizer: one token per character, or, with ``byte_encoding``, one per byte
of the encoded text, as an id (the byte + 1, so 0 stays padding) that bypasses the vocabulary."""

from __future__ import annotations

import codecs
from typing import Any, Mapping

from distrain.config.errors import Problem, join_path
from distrain.data.fields import Field, TextField, TokenIdsField
from distrain.data.reader import RecordError
from distrain.data.tokenizer import Token, Tokenizer, with_boundary_tokens


@Tokenizer.register("character")
class CharacterTokenizer(Tokenizer):
    """``start_tokens`` and ``end_tokens`` are strings, or, with ``byte_encoding``, integer ids; both kinds are
    added at offset 0, as AllenNLP did."""

    #: where a config block must be this class (the characters indexer's ``character_tokenizer``), no ``type``
    default_implementation = "character"

    def __init__(self, byte_encoding: str | None = None, lowercase_characters: bool = False,
                 start_tokens: list[str | int] | None = None, end_tokens: list[str | int] | None = None) -> None:
        self.byte_encoding = byte_encoding
        self.lowercase_characters = lowercase_characters
        self.start_tokens = start_tokens
        self.end_tokens = end_tokens

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        encoding = arguments["byte_encoding"]
        if encoding is not None:
            try:
                codecs.lookup(encoding)
            except LookupError:
                return [Problem("byte_encoding", f'"{encoding}" is not an encoding Python knows (e.g. "utf-8")')]
        kind, wanted = (int, "an integer id (byte_encoding is set)") if encoding else (str, "a string")
        return [Problem(join_path(key, index), f"must be {wanted}, got {value!r}")
                for key in ("start_tokens", "end_tokens") for index, value in enumerate(arguments[key] or ())
                if not isinstance(value, kind)]

    def tokenize(self, text: str) -> list[Token]:  # type: ignore[override]
        if self.lowercase_characters:
            text = text.lower()
        if self.byte_encoding is None:
            tokens = [Token(character) for character in text]
        else:
            try:
                encoded = text.encode(self.byte_encoding)
            except UnicodeEncodeError as error:
                raise RecordError(f"{error.object[error.start:error.end]!r} cannot be encoded in "
                                  f"{self.byte_encoding} (tokenizer.byte_encoding)") from None
            tokens = [Token(text_id=byte + 1) for byte in encoded]
        return with_boundary_tokens(tokens, self.start_tokens, self.end_tokens, end_idx=0)

    def to_field(self, text: str, namespace: str = "tokens") -> Field:
        tokens = self.tokenize(text)
        if self.byte_encoding is None:
            return TextField(tokens, namespace=namespace)
        return TokenIdsField([token.text_id for token in tokens], pad_value=0)
