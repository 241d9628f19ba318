"""AllenNLP's ``next_token_lm`` reader (allennlp-models v2.10.1): a sentence in a text field ``tokens``, and the
word that should follow it in a text field ``target_ids`` of one token, indexed as the sentence is.

It was written for demos (interpreting and attacking a language model), as allennlp-models says: reading a file
makes each line a sentence whose next word is ``"the"``, whatever the line, which is what its tests train on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from distrain.config.constraints import PositiveInt
from distrain.data.fields import TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.tokenizer import Token, Tokenizer
from distrain.zoo.lm.readers.target_tokens import SentenceTargetsReader, target_token

#: the next word of every sentence read from a file (AllenNLP's)
FILE_TARGET = "the"


@DatasetReader.register("next_token_lm")
class NextTokenLMReader(SentenceTargetsReader):
    """The tokenizer splits on whitespace unless given; ``max_tokens`` keeps a sentence's last tokens only.
    Blank lines are skipped (AllenNLP made each an instance without tokens, which no model can read)."""

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 max_tokens: PositiveInt | None = None, **kwargs) -> None:
        super().__init__(tokenizer, token_indexers, **kwargs)
        self.max_tokens = max_tokens

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "target_ids": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for _, line in self.owned_lines(path):
            self.num_parsed += 1
            yield self.text_to_instance(line, self.tokenizer.tokenize(line), FILE_TARGET)

    def text_to_instance(self, sentence: str | None = None, tokens: list[Token] | None = None,
                         target: str | None = None) -> dict:
        """``tokens`` (else ``sentence`` tokenized) and, given a ``target`` word, its ``target_ids``."""
        if tokens is None:
            if sentence is None:
                raise ValueError("expected either 'sentence' or 'tokens' to not be null")
            tokens = self.tokenizer.tokenize(sentence)
        tokens = list(tokens)
        if self.max_tokens is not None:
            tokens = tokens[-self.max_tokens:]
        instance = {"tokens": TextField(tokens, self.token_indexers)}
        if target:
            instance["target_ids"] = TextField([target_token(target, self.targets_tokenizer)], self.token_indexers)
        return instance
