"""A text in, the label the classifier ranks first and that label's probability out."""

from distrain.allennlp import Instance, JsonDict, Predictor


@Predictor.register("text_label")
class TextLabelPredictor(Predictor):
    """Reads ``{"text": ...}``; :meth:`predict` keeps only the label and its probability."""

    def predict(self, text: str) -> JsonDict:
        output = self.predict_json({"text": text})
        return {"label": output["label"], "probability": output["probability"]}

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(json_dict["text"])
