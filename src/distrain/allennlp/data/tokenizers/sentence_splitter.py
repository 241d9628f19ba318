"""``allennlp.data.tokenizers.sentence_splitter``: distrain's sentence splitters, with AllenNLP's ``to_params``."""

from __future__ import annotations

from typing import Any

from distrain.data.sentence_splitter import SentenceSplitter
from distrain.data.sentence_splitters.spacy import SpacySentenceSplitter as DistrainSpacySentenceSplitter

__all__ = ["SentenceSplitter", "SpacySentenceSplitter"]


class SpacySentenceSplitter(DistrainSpacySentenceSplitter):
    def to_params(self) -> Any:
        from distrain.allennlp.common.params import Params

        return Params({"type": "spacy", "language": self._language, "rule_based": self._rule_based})
