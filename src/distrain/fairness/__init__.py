"""AllenNLP's bias mitigation (``allennlp.fairness``): bias directions found from seed word pairs, and mitigators
that remove them from a model's embeddings. Its own package: a direction tokenizes its seed words (data/) and
acts on embeddings (modules/), which must not import each other both ways."""
