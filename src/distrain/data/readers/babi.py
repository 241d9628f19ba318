"""AllenNLP's ``babi`` reader: bAbI question answering. Each question becomes an instance of the story so far
(``context``: one text, or with ``keep_sentences`` a list of its sentences, then ``supports``: the supporting
sentences as indices into that list), the ``question`` and the one-word ``answer``; a story restarts at a line
numbered 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import IndexField, ListField, TextField
from distrain.data.reader import WHOLE, DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Token


@DatasetReader.register("babi")
class BabiReader(DatasetReader):
    """Lines ``N sentence.`` and ``N question?<TAB>answer<TAB>supporting line numbers``."""

    def __init__(self, keep_sentences: bool = False, token_indexers: dict[str, TokenIndexer] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._keep_sentences = keep_sentences
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    def _read(self, path: Path) -> Iterator[dict]:
        context: list[list[str]] = []
        for number, line in self.owned_lines(Path(path), WHOLE):  # stories span lines: shares split instances
            if "?" in line:
                parts = line.replace("?", " ?").split("\t")
                if len(parts) != 3:
                    self.invalid(Path(path), number, "a question line is question<TAB>answer<TAB>supports")
                    continue
                question, answer, supports = parts
                yield self.text_to_instance(context, question.split()[1:], answer.strip(),
                                            [int(support) - 1 for support in supports.split()])
            elif line.strip():
                sentence = line.replace(".", " .").split()[1:]
                context = [sentence] if line.split()[0] == "1" else [*context, sentence]

    def text_to_instance(self, context: list[list[str]], question: list[str], answer: str,  # type: ignore[override]
                         supports: list[int]) -> dict:
        text = lambda words: TextField([Token(word) for word in words], self._token_indexers)  # noqa: E731
        instance: dict = {}
        if self._keep_sentences:
            sentences = ListField([text(sentence) for sentence in context])
            instance["context"] = sentences
            instance["supports"] = ListField([IndexField(support, sentences) for support in supports])
        else:
            instance["context"] = text([word for sentence in context for word in sentence])
        instance["question"] = text(question)
        instance["answer"] = text([answer])
        return instance
