"""Tab-separated rows, one column the text and one its label: which is which is the config's choice."""

from typing import Dict, Iterator, Optional

from distrain.allennlp import (DatasetReader, Instance, LabelField, SingleIdTokenIndexer, TextField, TokenIndexer,
                               Tokenizer, WhitespaceTokenizer)


@DatasetReader.register("tsv_labelled_text")
class LabelledTextTsvReader(DatasetReader):
    """Rows of tab-separated columns; ``text_column`` and ``label_column`` pick two of them (-1: the last)."""

    def __init__(self, text_column: int = 0, label_column: int = -1, lowercase: bool = False,
                 tokenizer: Optional[Tokenizer] = None, token_indexers: Optional[Dict[str, TokenIndexer]] = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.text_column = text_column
        self.label_column = label_column
        self.lowercase = lowercase
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}

    def text_to_instance(self, text: str, label: Optional[str] = None) -> Instance:
        """The fields ``forward`` takes: ``words``, and ``label`` when the text has one (not at prediction)."""
        if self.lowercase:
            text = text.lower()
        fields = {"words": TextField(self.tokenizer.tokenize(text), self.token_indexers)}
        if label is not None:
            fields["label"] = LabelField(label)
        return Instance(fields)

    def _read(self, file_path: str) -> Iterator[Instance]:
        with open(file_path, encoding="utf-8") as rows:
            for number, row in enumerate(rows, start=1):
                if not row.strip():
                    continue  # blank lines separate nothing here
                columns = row.rstrip("\r\n").split("\t")
                try:
                    text, label = columns[self.text_column], columns[self.label_column]
                except IndexError:
                    raise ValueError(f"{file_path}:{number}: only {len(columns)} tab-separated column(s), for "
                                     f"text_column {self.text_column} and label_column {self.label_column}") from None
                yield self.text_to_instance(text, label)
