"""Coreference resolution: mentions found among a document's spans and linked to their antecedents (AllenNLP's
``coref``), scored as the CoNLL-2012 scorer scores clusters."""
