"""Formats more than one task folder reads (CoNLL-2012 / OntoNotes files: NER, SRL and coreference)."""
