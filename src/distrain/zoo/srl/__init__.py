"""Semantic role labelling: BIO argument tags for one predicate at a time, decoded under BIO constraints and scored as
the CoNLL-2005 script scores them (AllenNLP's ``srl`` and ``srl_bert``)."""
