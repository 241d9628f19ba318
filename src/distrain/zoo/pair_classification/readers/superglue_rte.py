"""SuperGLUE's RTE JSON lines (AllenNLP's ``transformer_superglue_rte``): ``premise``, ``hypothesis``,
``idx`` and, in labelled files, ``label`` (``entailment`` or ``not_entailment``).

The reader builds its own pretrained tokenizer and indexer from ``transformer_model_name``, as AllenNLP's
does: premise and hypothesis are tokenized without special tokens and joined with the model's pair template
(``[CLS] p [SEP] h [SEP]``); the metadata keeps the texts, their pieces, the index and the label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from distrain.data.fields import LabelField, MetadataField, TextField
from distrain.data.reader import DatasetReader
from distrain.data.token_indexers.pretrained_transformer import PretrainedTransformerIndexer
from distrain.data.tokenizers.pretrained_transformer import PretrainedTransformerTokenizer
from distrain.pretrained import PretrainedName


@DatasetReader.register("transformer_superglue_rte")
class TransformerSuperGlueRteReader(DatasetReader):
    """Reads only its share of the lines (distributed-aware); a line missing ``premise``, ``hypothesis``
    or ``idx`` is named by file:line. ``tokenizer_kwargs`` is AllenNLP's; distrain loads the model's own
    tokenizer settings and takes none."""

    distributed_aware = True

    def __init__(self, transformer_model_name: PretrainedName = "roberta-base",
                 tokenizer_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if tokenizer_kwargs:
            raise ValueError("tokenizer_kwargs is not supported: the model's own tokenizer settings are used")
        self.tokenizer = PretrainedTransformerTokenizer(transformer_model_name, max_length=None,
                                                        add_special_tokens=False)
        self.token_indexers = {"tokens": PretrainedTransformerIndexer(transformer_model_name, max_length=512)}

    @classmethod
    def declared_fields(cls, arguments):
        return {"tokens": True, "metadata": True, "label": False}

    def _read(self, path: Path) -> Iterator[dict]:
        for _, record in self.json_lines(path, required=("premise", "hypothesis", "idx")):
            yield self.text_to_instance(record["idx"], record.get("label"), record["premise"], record["hypothesis"])

    def text_to_instance(self, index: int, label: str | None, premise: str, hypothesis: str) -> dict:
        premise_tokens, hypothesis_tokens = self.tokenizer.tokens(premise), self.tokenizer.tokens(hypothesis)
        metadata: dict = {"premise": premise, "premise_tokens": [str(token) for token in premise_tokens],
                          "hypothesis": hypothesis, "hypothesis_tokens": [str(token) for token in hypothesis_tokens],
                          "index": index}
        instance: dict = {"tokens": TextField(self.tokenizer.with_special_tokens(premise_tokens, hypothesis_tokens),
                                              self.token_indexers)}
        if label:
            instance["label"] = LabelField(label)
            metadata["label"] = label
        instance["metadata"] = MetadataField(metadata)
        return instance
