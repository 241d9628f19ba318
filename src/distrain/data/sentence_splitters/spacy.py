"""AllenNLP's ``spacy`` sentence splitter: spaCy's rule-based ``sentencizer`` (``rule_based``), or the sentence
boundaries of the model package's dependency parse. Without the model package (none installs from PyPI) the
parse-based splitter falls back to the rules, as the ``spacy`` tokenizer falls back to ``spacy.blank``, and the log
says so once."""

from __future__ import annotations

import functools
import logging
from typing import Any

from distrain.data.sentence_splitter import SentenceSplitter
from distrain.data.tokenizers.spacy import language_code, model_installed

logger = logging.getLogger(__name__)


@SentenceSplitter.register("spacy")
class SpacySentenceSplitter(SentenceSplitter):
    """Sentences by spaCy: its rule-based sentencizer, or (``rule_based: false``, with the model package) the
    dependency parse's boundaries; ``language`` is the model package or a bare language code."""

    def __init__(self, language: str = "en_core_web_sm", rule_based: bool = False) -> None:
        self._language = language
        self._rule_based = rule_based

    @property
    def nlp(self) -> Any:
        return _pipeline(self._language, self._rule_based or not model_installed(self._language))

    def split_sentences(self, text: str) -> list[str]:
        return [sentence.text.strip() for sentence in self.nlp(text).sents if sentence.text.strip()]

    def batch_split_sentences(self, texts: list[str]) -> list[list[str]]:
        return [[sentence.text.strip() for sentence in doc.sents if sentence.text.strip()]
                for doc in self.nlp.pipe(texts)]


def sentence_pipeline(language: str) -> Any:
    """The spaCy pipeline that marks sentences in a ``Doc`` (``.sents``): the model package's parse, or without it
    spaCy's rule-based sentencizer, as the splitter uses."""
    return _pipeline(language, not model_installed(language))


@functools.cache
def _pipeline(language: str, rules: bool) -> Any:
    import spacy

    if not rules:
        return spacy.load(language, disable=["vectors", "textcat", "tagger", "ner"])
    if not model_installed(language) and language_code(language) != language:
        logger.info("spaCy model package %s is not installed: sentences split by spaCy's rule-based sentencizer",
                    language)
    nlp = spacy.blank(language_code(language)) if not model_installed(language) else \
        spacy.load(language, disable=["vectors", "textcat", "tagger", "ner", "parser"])
    if "sentencizer" not in nlp.pipe_names:
        nlp.add_pipe("sentencizer")
    return nlp
