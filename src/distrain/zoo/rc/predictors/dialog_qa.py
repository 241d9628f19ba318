"""``dialog_qa``: a QuAC dialog (``{"paragraphs": [{"context": ..., "qas": [...]}]}``, one line of QuAC's data file) to
each turn's answer, yes/no and follow-up, as AllenNLP's predictor of that name."""

from __future__ import annotations

import json
from typing import Any

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict


@Predictor.register("dialog_qa")
class DialogQAPredictor(Predictor):
    """For ``dialog_qa`` and its ``quac`` reader: the first paragraph's passage and every turn, answers included
    (they mark the previous answers the model reads); the answer texts are under ``best_span_str``."""

    #: what AllenNLP's DialogQA answers (distrain's model also gives the span logits, the best span's indices and
    #: the loss's weight, which its own ``predict`` writes); the loss only for one dialog alone, as AllenNLP's
    answered = ("best_span_str", "qid", "yesno", "followup", "loss")

    def predict(self, jsonline: str) -> JsonDict:
        return self.predict_json(json.loads(jsonline))

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        from distrain.data.reader import RecordError

        paragraphs = self.required(json_dict, "paragraphs")
        if not isinstance(paragraphs, list) or not paragraphs or not isinstance(paragraphs[0], dict):
            raise RecordError('"paragraphs" is a list of QuAC paragraphs', "paragraphs")
        paragraph: dict[str, Any] = paragraphs[0]
        context, turns = self.required(paragraph, "context"), self.required(paragraph, "qas")
        questions = [self.required(turn, "question").strip().replace("\n", "") for turn in turns]
        answers = [self.required(turn, "answers") for turn in turns]
        metadata = {"instance_id": [turn.get("id") for turn in turns], "question": questions,
                    "answer_texts_list": [[answer["text"] for answer in answer_list] for answer_list in answers]}
        spans = [[(answer["answer_start"], answer["answer_start"] + len(answer["text"])) for answer in answer_list]
                 for answer_list in answers]
        reader = self._dataset_reader
        return reader.text_to_instance(questions, context, spans, reader.tokenizer.tokenize(context),
                                       [str(turn.get("yesno")) for turn in turns],
                                       [str(turn.get("followup")) for turn in turns], metadata)

    def _run(self, instances: list[Instance]) -> list[JsonDict]:
        return [{key: output[key] for key in self.answered if key in output} for output in super()._run(instances)]
