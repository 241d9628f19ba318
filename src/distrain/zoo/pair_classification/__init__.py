"""Models that classify a pair of texts (premise and hypothesis, two questions) by comparing them word by word, with
the SNLI, Quora and SuperGLUE RTE readers: AllenNLP's ``pair_classification``."""
