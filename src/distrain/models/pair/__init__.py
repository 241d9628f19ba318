"""Models that classify a pair of texts (premise and hypothesis, two questions) by comparing them word by word:
AllenNLP's ``pair_classification`` models."""
