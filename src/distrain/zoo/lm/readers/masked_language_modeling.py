"""AllenNLP's ``masked_language_modeling`` reader (allennlp-models v2.10.1): a sentence with ``[MASK]`` tokens in a
text field ``tokens``, the masks' positions in ``mask_positions`` (a list of index fields) and, when known, the words
they hide in a text field ``target_ids`` (one token per mask, indexed as the sentence is).

As allennlp-models says, its file reading is a demo's: each line's first token is masked and is its target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from distrain.data.fields import IndexField, ListField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.tokenizer import Token
from distrain.zoo.lm.readers.target_tokens import SentenceTargetsReader, target_token

MASK = "[MASK]"


@DatasetReader.register("masked_language_modeling")
class MaskedLanguageModelingReader(SentenceTargetsReader):
    """The tokenizer splits on whitespace unless given. Blank lines are skipped (AllenNLP's reading failed there)."""

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "mask_positions": True, "target_ids": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for _, line in self.owned_lines(path):
            self.num_parsed += 1
            tokens = list(self.tokenizer.tokenize(line))
            target = tokens[0].text if isinstance(tokens[0], Token) else str(tokens[0])
            tokens[0] = Token(MASK)
            yield self.text_to_instance(line, tokens, [target])

    def text_to_instance(self, sentence: str | None = None, tokens: list[Token] | None = None,
                         targets: list[str] | None = None) -> dict:
        """``tokens`` (else ``sentence`` tokenized), holding at least one ``[MASK]``, and as many ``targets``."""
        if not tokens:
            tokens = self.tokenizer.tokenize(sentence or "")
        tokens = list(tokens)
        text = TextField(tokens, self.token_indexers)
        positions = [i for i, token in enumerate(tokens) if (token if isinstance(token, str) else token.text) == MASK]
        if not positions:
            raise ValueError("No [MASK] tokens found!")
        if targets and len(targets) != len(positions):
            raise ValueError(f"Found {len(positions)} mask tokens and {len(targets)} targets")
        instance = {"tokens": text, "mask_positions": ListField([IndexField(i, text) for i in positions])}
        if targets is not None:
            instance["target_ids"] = TextField([target_token(word, self.targets_tokenizer) for word in targets],
                                               self.token_indexers)
        return instance
