"""``textual_entailment``: ``{"premise": ..., "hypothesis": ...}`` to an entailment model's label
probabilities, as AllenNLP's predictor of that name."""

from __future__ import annotations

from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.data.fields import Instance


@Predictor.register("textual_entailment")
class TextualEntailmentPredictor(Predictor):
    """For the pair classifiers (``decomposable_attention``, ``esim``, ``bimpm``) and their ``snli`` reader."""

    def predict(self, premise: str, hypothesis: str) -> JsonDict:
        return self.predict_json({"premise": premise, "hypothesis": hypothesis})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(self.required(json_dict, "premise"),
                                                     self.required(json_dict, "hypothesis"))
