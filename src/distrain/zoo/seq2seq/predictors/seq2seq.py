"""``seq2seq``: ``{"source": ...}`` to a sequence-to-sequence model's decoded tokens, as AllenNLP's predictor of that
name (the default predictor of ``simple_seq2seq``, ``composed_seq2seq``, ``copynet_seq2seq``, ``bart`` and ``t5``)."""

from __future__ import annotations

from distrain.data.fields import Instance
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict


@Predictor.register("seq2seq")
class Seq2SeqPredictor(Predictor):
    """The source alone goes through the archive's reader (no target): the answer is what the model's
    ``make_output_human_readable`` gives, ``predicted_tokens`` among it."""

    def predict(self, source: str) -> JsonDict:
        return self.predict_json({"source": source})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(self.required(json_dict, "source"))
