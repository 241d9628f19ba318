"""``reading_comprehension``: ``{"question": ..., "passage": ...}`` to a span-extraction model's best span, as
AllenNLP's predictor of that name (BiDAF, QANet)."""

from __future__ import annotations

from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.data.fields import Instance


@Predictor.register("reading_comprehension")
class ReadingComprehensionPredictor(Predictor):
    """For the extractive readers over a ``squad`` reader: the question and passage go to its
    ``text_to_instance``, and the answer is the model's ``best_span_str`` with its span scores."""

    def predict(self, question: str, passage: str) -> JsonDict:
        return self.predict_json({"question": question, "passage": passage})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(self.required(json_dict, "question"),
                                                     self.required(json_dict, "passage"))
