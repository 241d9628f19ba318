import json
from typing import Dict, Iterable, List, Optional, Union

from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import Field, LabelField, ListField, TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Tokenizer, WhitespaceTokenizer


@DatasetReader.register("thread_jsonl")
class ThreadJsonlReader(DatasetReader):
    """``{"posts": [...], "topic": ...}`` per line: the posts as a list of text fields, or (``flatten``) one text
    field ``tokens`` of them all, as ``basic_classifier`` reads it."""

    def __init__(self, tokenizer: Optional[Tokenizer] = None, token_indexers: Optional[Dict[str, TokenIndexer]] = None,
                 flatten: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or WhitespaceTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer(lowercase_tokens=True)}
        self.flatten = flatten

    def _read(self, file_path: str) -> Iterable[Instance]:
        with open(cached_path(file_path)) as lines:
            for line in lines:
                if line.strip():
                    thread = json.loads(line)
                    yield self.text_to_instance(thread["posts"], thread.get("topic"))

    def text_to_instance(self, posts: Union[str, List[str]], topic: Optional[str] = None) -> Instance:
        if isinstance(posts, str):  # one post: what AllenNLP's text_classifier predictor hands a reader
            posts = [posts]
        fields: Dict[str, Field] = {}
        if self.flatten:
            fields["tokens"] = TextField(self.tokenizer.tokenize(" ".join(posts)), self.token_indexers)
        else:
            fields["posts"] = ListField([TextField(self.tokenizer.tokenize(post), self.token_indexers)
                                         for post in posts])
        if topic is not None:
            fields["label"] = LabelField(topic)
        return Instance(fields)
