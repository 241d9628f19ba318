"""SentenceSplitter base: a text into its sentences (AllenNLP's ``SentenceSplitter``; readers that segment a
document into sentences take one)."""

from __future__ import annotations

from distrain.registry import Registrable


class SentenceSplitter(Registrable):
    """``split_sentences(text)``: the text's sentences, in order, each stripped of surrounding spaces."""

    default_implementation = "spacy"

    def split_sentences(self, text: str) -> list[str]:
        raise NotImplementedError

    def batch_split_sentences(self, texts: list[str]) -> list[list[str]]:
        return [self.split_sentences(text) for text in texts]
