"""``next_token_lm``: ``{"sentence": ...}`` to a ``next_token_lm``'s best next words, as AllenNLP's predictor of that
name (allennlp-models v2.10.1)."""

from __future__ import annotations

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.zoo.lm.predictors.sentence_input import sentence_instance


@Predictor.register("next_token_lm")
class NextTokenLMPredictor(Predictor):
    """The sentence goes to the reader's ``text_to_instance``; the answer is the model's readable outputs
    (``probabilities``, ``top_indices``, ``top_tokens``, ``token_ids``, ``tokens``)."""

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return sentence_instance(self._dataset_reader, self.required(json_dict, "sentence"))
