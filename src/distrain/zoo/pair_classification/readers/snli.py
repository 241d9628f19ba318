"""SNLI's JSON lines (AllenNLP's ``snli``): ``sentence1`` (premise), ``sentence2`` (hypothesis) and
``gold_label``; records whose annotators did not agree (``"-"``) are skipped and a record without a label
is read unlabelled, as in AllenNLP. The default tokenizer is AllenNLP's, ``spacy``.

With a transformer's tokenizer the pair becomes one ``tokens`` field in that tokenizer's own pair encoding
(``combine_input_fields``, the default there), which ``basic_classifier`` classifies as any text; otherwise
``premise`` and ``hypothesis`` are fields of their own, for models that compare the two (``decomposable_attention``,
``esim``), and the metadata holds their tokens as AllenNLP's does (``premise_tokens``, ``hypothesis_tokens``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import LabelField, MetadataField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexer import TokenIndexer
from distrain.data.token_indexers.single_id import SingleIdTokenIndexer
from distrain.data.tokenizer import Tokenizer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.data.tokenizers.spacy import SpacyTokenizer

NOT_AGREED = "-"


def pair_text_fields(arguments: dict) -> dict[str, bool]:
    """A pair reader's text fields, from its arguments: one ``tokens`` field in a pretrained tokenizer's pair
    encoding (``combine_input_fields``, its default with such a tokenizer), else ``premise`` and ``hypothesis``."""
    combine = arguments.get("combine_input_fields")
    if combine is None:
        combine = isinstance(arguments.get("tokenizer"), PretrainedTransformerTokenizer)
    return {"tokens": True} if combine else {"premise": True, "hypothesis": True}


@DatasetReader.register("snli")
class SnliReader(DatasetReader):
    """Reads only its share of the lines (distributed-aware); a line missing a key is named by file:line.
    ``collapse_labels`` folds neutral and contradiction into ``non-entailment``."""

    distributed_aware = True

    def __init__(self, tokenizer: Tokenizer | None = None, token_indexers: dict[str, TokenIndexer] | None = None,
                 combine_input_fields: bool | None = None, collapse_labels: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tokenizer = tokenizer or SpacyTokenizer()
        self.token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        if combine_input_fields is None:
            combine_input_fields = isinstance(self.tokenizer, PretrainedTransformerTokenizer)
        if combine_input_fields and not isinstance(self.tokenizer, PretrainedTransformerTokenizer):
            raise ValueError("combine_input_fields needs a pretrained_transformer tokenizer (its pair encoding)")
        self.combine_input_fields = combine_input_fields
        self.collapse_labels = collapse_labels

    @classmethod
    def declared_fields(cls, arguments):
        return {**pair_text_fields(arguments), "metadata": True, "label": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for _, record in self.json_lines(path, required=("sentence1", "sentence2")):
            if record.get("gold_label") == NOT_AGREED:
                continue
            yield self.text_to_instance(record["sentence1"], record["sentence2"], record.get("gold_label"))

    def text_to_instance(self, premise: str, hypothesis: str, label: str | None = None) -> dict:
        metadata: dict = {"premise": premise, "hypothesis": hypothesis}
        if self.combine_input_fields:
            instance: dict = {"tokens": TextField(self.tokenizer.pair_tokens(premise, hypothesis), self.token_indexers)}
        else:
            premise_tokens, hypothesis_tokens = self.tokenizer.tokenize(premise), self.tokenizer.tokenize(hypothesis)
            instance = {"premise": TextField(premise_tokens, self.token_indexers),
                        "hypothesis": TextField(hypothesis_tokens, self.token_indexers)}
            metadata["premise_tokens"] = [str(token) for token in premise_tokens]
            metadata["hypothesis_tokens"] = [str(token) for token in hypothesis_tokens]
        instance["metadata"] = MetadataField(metadata)
        if label:  # AllenNLP's test: an empty label is no label
            if self.collapse_labels:
                label = "entailment" if label == "entailment" else "non-entailment"
            instance["label"] = LabelField(label)
        return instance
