"""A text classifier written the way AllenNLP's guide writes one (allenai/allennlp-guide,
quick_start/my_text_classifier: a ``classification-tsv`` reader, a ``simple_classifier`` model and a
``sentence_classifier`` predictor), against the same AllenNLP names, imported from :mod:`distrain.allennlp`
instead of ``allennlp``.

It is written for these tests, not copied: it makes every call the guide's reader and model make
(``typing.Dict`` hints with ``None`` defaults, ``**kwargs`` to the base reader, ``Instance(fields)``,
``TextField(tokens, token_indexers)``, ``_read(file_path)`` opening the file itself, ``get_vocab_size``,
``get_output_dim``, a metric kept as an attribute, ``util.get_text_field_mask``, ``get_metrics``; the predictor's
``predict_json`` and ``_json_to_instance`` through ``self._dataset_reader.text_to_instance``).
"""

from my_text_classifier.classification_tsv import ClassificationTsvReader
from my_text_classifier.sentence_classifier_predictor import SentenceClassifierPredictor
from my_text_classifier.simple_classifier import SimpleClassifier

__all__ = ["ClassificationTsvReader", "SentenceClassifierPredictor", "SimpleClassifier"]
