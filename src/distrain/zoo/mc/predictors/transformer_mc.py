"""``transformer_mc``: ``{"prefix": ..., "alternatives": [...]}`` to each alternative's logit and the best one, as
AllenNLP's predictor of that name."""

from __future__ import annotations

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict


@Predictor.register("transformer_mc")
class MultipleChoiceTransformerPredictor(Predictor):
    """For ``transformer_mc`` and its readers: the prefix and each alternative are encoded as a pair, and the
    answer is each alternative's logit and the ``best_alternative``."""

    def predict(self, prefix: str, alternatives: list[str]) -> JsonDict:
        return self.predict_json({"prefix": prefix, "alternatives": alternatives})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        alternatives = self.required(json_dict, "alternatives")
        if not isinstance(alternatives, list) or not all(isinstance(item, str) for item in alternatives):
            from distrain.data.reader import RecordError

            raise RecordError('"alternatives" is a list of strings', "alternatives")
        return self._dataset_reader.text_to_instance("no_qid", self.required(json_dict, "prefix"), alternatives)
