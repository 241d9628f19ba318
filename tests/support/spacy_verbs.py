"""A spaCy pipeline that tags verbs, standing in for a spaCy model package (none installs from PyPI, so
``spacy.blank`` tags nothing and a semantic role labeller's predictor finds no predicate). The oracle's goldens
(tests/allennlp_oracle/predictor_outputs.py) and the tests that compare with them use this same pipeline, so both
predictors see the same tags: a blank English pipeline whose attribute ruler marks the words below ``VERB``."""

from __future__ import annotations

from typing import Any

VERBS = ("ate", "bought", "chased", "gave", "loves", "met", "ran", "said", "sat", "saw", "went", "wrote")


def verb_tagging_pipeline(language: str = "en") -> Any:
    import spacy

    nlp = spacy.blank(language[:2])
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"LOWER": {"IN": list(VERBS)}}]], {"POS": "VERB"})
    return nlp
