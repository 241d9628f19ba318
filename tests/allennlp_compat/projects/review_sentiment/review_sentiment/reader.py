import json
from typing import Dict, Iterable, Optional

from overrides import overrides

from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance, TokenIndexer, Tokenizer
from allennlp.data.fields import LabelField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer
from allennlp.data.tokenizers import WhitespaceTokenizer


@DatasetReader.register("review_jsonl")
class ReviewJsonlReader(DatasetReader):
    """One review per line: {"text": ..., "label": ...}; the label is left out at prediction time."""

    def __init__(self, tokenizer: Optional[Tokenizer] = None, token_indexers: Optional[Dict[str, TokenIndexer]] = None,
                 max_tokens: Optional[int] = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self.max_tokens = max_tokens

    @overrides
    def text_to_instance(self, text: str, label: Optional[str] = None) -> Instance:
        tokens = self.tokenizer.tokenize(text.lower())
        if self.max_tokens:
            tokens = tokens[: self.max_tokens]
        fields = {"text": TextField(tokens, self.token_indexers)}
        if label is not None:
            fields["label"] = LabelField(label)
        return Instance(fields)

    @overrides
    def _read(self, file_path: str) -> Iterable[Instance]:
        with open(cached_path(file_path), "r") as lines:
            for line in lines:
                if line.strip():
                    review = json.loads(line)
                    yield self.text_to_instance(review["text"], review.get("label"))
