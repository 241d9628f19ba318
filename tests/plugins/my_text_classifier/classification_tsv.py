"""Lines of ``text<TAB>label``, read as an AllenNLP reader reads them (see the package docstring)."""

from typing import Dict, Iterable

from distrain.allennlp import (DatasetReader, Instance, LabelField, SingleIdTokenIndexer, TextField, TokenIndexer,
                               Tokenizer, WhitespaceTokenizer)


@DatasetReader.register("classification-tsv")
class ClassificationTsvReader(DatasetReader):
    def __init__(self, tokenizer: Tokenizer = None, token_indexers: Dict[str, TokenIndexer] = None,
                 max_tokens: int = None, **kwargs):
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.max_tokens = max_tokens

    def text_to_instance(self, text: str, label: str = None) -> Instance:
        words = self.tokenizer.tokenize(text)
        if self.max_tokens:
            words = words[: self.max_tokens]
        fields = {"text": TextField(words, self.token_indexers)}
        if label:
            fields["label"] = LabelField(label)
        return Instance(fields)

    def _read(self, file_path: str) -> Iterable[Instance]:
        with open(file_path, "r") as rows:
            for row in rows:
                text, label = row.strip().split("\t")
                yield self.text_to_instance(text, label)
