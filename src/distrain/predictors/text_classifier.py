"""``text_classifier``: ``{"sentence": ...}`` to a classifier's outputs, as AllenNLP's predictor of that name."""

from __future__ import annotations

from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.data.fields import Instance


@Predictor.register("text_classifier")
class TextClassifierPredictor(Predictor):
    """For any model over one text (``basic_classifier`` and kin). A reader without a tokenizer of its own gets
    the sentence split by spaCy first, as AllenNLP does."""

    warm_up_input = {"sentence": "warm up"}

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentence = self.required(json_dict, "sentence")
        reader = self._dataset_reader
        if getattr(reader, "tokenizer", None) is None and getattr(reader, "_tokenizer", None) is None:
            from distrain.data.tokenizers.spacy import SpacyTokenizer

            sentence = SpacyTokenizer().tokenize(sentence)
        return reader.text_to_instance(sentence)
