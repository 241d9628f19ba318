"""AllenNLP's bias mitigation (``allennlp.fairness``): bias directions found from seed word pairs, mitigators
that remove them from a model's embeddings, and the ``bias_mitigator_applicator`` model that applies one to
another model's embedding layer."""
