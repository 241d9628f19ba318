from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors import Predictor


@Predictor.register("thread_topic")
class ThreadTopicPredictor(Predictor):
    def predict(self, posts) -> JsonDict:
        return self.predict_json({"posts": posts})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(json_dict["posts"])
