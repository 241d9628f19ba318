import logging
from typing import Dict, Iterable

import numpy
from overrides import overrides

from allennlp.common.file_utils import cached_path
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import ArrayField, Field, MetadataField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token, Tokenizer, WhitespaceTokenizer

logger = logging.getLogger(__name__)


@DatasetReader.register("claim_tsv")
class ClaimTsvReader(DatasetReader):
    """``claim<TAB>score`` per line; the score is a float, left out at prediction time."""

    def __init__(self, tokenizer: Tokenizer = None, token_indexers: Dict[str, TokenIndexer] = None,
                 lowercase: bool = True, lazy: bool = False, **kwargs) -> None:
        super().__init__(lazy=lazy, **kwargs)
        self._tokenizer = tokenizer or WhitespaceTokenizer()
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._lowercase = lowercase

    @overrides
    def _read(self, file_path: str) -> Iterable[Instance]:
        with open(cached_path(file_path), "r") as data_file:
            logger.info("Reading claims from %s", file_path)
            for line in data_file:
                line = line.strip("\n")
                if not line:
                    continue
                claim, score = line.split("\t")
                yield self.text_to_instance(claim, float(score))

    @overrides
    def text_to_instance(self, claim: str, score: float = None) -> Instance:  # type: ignore
        tokens = self._tokenizer.tokenize(claim.lower() if self._lowercase else claim)
        fields: Dict[str, Field] = {"tokens": TextField([Token(t.text) for t in tokens], self._token_indexers),
                                    "metadata": MetadataField({"claim": claim})}
        if score is not None:
            fields["score"] = ArrayField(numpy.array(score, dtype=numpy.float32))
        return Instance(fields=fields)
