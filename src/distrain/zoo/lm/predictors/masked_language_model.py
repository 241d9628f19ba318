"""``masked_language_model``: ``{"sentence": "... [MASK] ..."}`` to a ``masked_language_model``'s best words for
each mask, as AllenNLP's predictor of that name (allennlp-models v2.10.1)."""

from __future__ import annotations

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.zoo.lm.predictors.sentence_input import sentence_instance


@Predictor.register("masked_language_model")
class MaskedLanguageModelPredictor(Predictor):
    """The sentence, holding at least one ``[MASK]``, goes to the reader's ``text_to_instance``; the answer is the
    model's readable outputs (``probabilities``, ``top_indices``, ``words``, ``token_ids``, ``tokens``)."""

    def predict(self, sentence_with_masks: str) -> JsonDict:
        return self.predict_json({"sentence": sentence_with_masks})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return sentence_instance(self._dataset_reader, self.required(json_dict, "sentence"))
