"""Sequence tagging with a conditional random field (``crf_tagger``) and the CoNLL-2003 and OntoNotes NER readers with
their tag schemes."""
