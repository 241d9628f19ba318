from overrides import overrides

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor


@Predictor.register("claim_scorer")
class ClaimScorer(Predictor):
    def predict(self, claim: str) -> JsonDict:
        return self.predict_json({"claim": claim})

    @overrides
    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(json_dict["claim"])
