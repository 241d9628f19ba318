"""Plain-text documents packed into fixed-length blocks, for causal (next-token) language modelling.

Each file is one document: its whole text is tokenised at once (so a BPE tokenizer keeps its
newlines and merges exactly), followed by the tokenizer's end-of-sequence id (its [SEP] when it has
no EOS), so the model learns where a document ends. The documents, in sorted file order, make one
stream of ids cut into blocks of ``sequence_length``; blocks cross document boundaries (no padding,
no token wasted), and the last, shorter remainder is dropped. Each block is both ``input_ids`` and
``labels``: the model shifts the labels by one itself.

The blocks depend only on the files and the tokenizer: the reader is run once, in the parent, and
every world size trains on the same blocks. Streamed (``"data_loader": {"lazy": true}``), reader ``i``
of ``n`` packs only files ``i, i+n, ...`` when there are enough of them (see ``owned_blocks``), holding
one document at a time: the blocks then depend on the number of readers. The path may be a file, a
folder, or a glob, and may start with ``package://``; ``exclude`` lists file-name globs to leave out
(held-out documents).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Iterator

from annotated_types import Ge

from distrain.config.errors import ConfigError, Problem
from distrain.data.fields import IGNORED_LABEL, TokenIdsField
from distrain.data.reader import DataError, DatasetReader
from distrain.data.readers.text_blocks import owned_blocks, text_files
from distrain.pretrained import PretrainedName, load_tokenizer

@DatasetReader.register("packed_text")
class PackedTextReader(DatasetReader):
    """Plain-text documents packed into blocks of ``sequence_length`` ids, for causal language modelling."""

    distributed_aware = True  # see owned_blocks

    def __init__(
        self,
        tokenizer_name: PretrainedName,
        sequence_length: Annotated[int, Ge(2)] = 128,
        exclude: list[str] | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.tokenizer_name = tokenizer_name
        self.sequence_length = sequence_length
        self.exclude = exclude or []

    def files(self, path: str | Path) -> list[Path]:
        return text_files(path, self.exclude)

    def separator(self) -> int:
        """The id that ends each document: the tokenizer's EOS, else its SEP."""
        tokenizer = load_tokenizer(self.tokenizer_name)
        for token_id in (tokenizer.eos_token_id, tokenizer.sep_token_id):
            if token_id is not None:
                return token_id
        raise ConfigError([Problem("dataset_reader.tokenizer_name", f"the tokenizer {self.tokenizer_name} has "
                                   "neither an end-of-sequence nor a [SEP] token to end documents with")])

    def read(self, path: str | Path) -> Iterator[dict]:
        for _, block in owned_blocks(self, self.files(path), self.blocks):
            yield self.text_to_instance(block)

    def blocks(self, files: list[Path]) -> Iterator[list[int]]:
        """The documents of ``files`` as one stream of ids cut into full blocks (one document in memory at a time)."""
        pending: list[int] = []
        separator = self.separator()
        for file in files:
            pending.extend(self.document_ids(file))
            pending.append(separator)
            whole = len(pending) - len(pending) % self.sequence_length
            for start in range(0, whole, self.sequence_length):
                yield pending[start:start + self.sequence_length]
            del pending[:whole]

    def document_ids(self, file: Path) -> list[int]:
        try:
            text = file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise DataError(f"{file}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        return load_tokenizer(self.tokenizer_name)(text, add_special_tokens=False, verbose=False)["input_ids"]

    @classmethod
    def declared_fields(cls, arguments):
        return {"input_ids": True, "labels": True}

    def text_to_instance(self, ids: list[int]) -> dict:
        pad = load_tokenizer(self.tokenizer_name).pad_token_id or 0
        return {"input_ids": TokenIdsField(ids, pad_value=pad), "labels": TokenIdsField(ids, pad_value=IGNORED_LABEL)}
