"""``sentence_tagger``: ``{"sentence": ...}`` to one tag per word, as AllenNLP's predictor of that name."""

from __future__ import annotations

from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict
from distrain.data.fields import Instance
from distrain.data.reader import DatasetReader
from distrain.models.model import Model


class SpacySentencePredictor(Predictor):
    """A predictor of ``{"sentence": ...}`` that splits the sentence with spaCy (``language``), whatever the
    reader's own tokenization, as AllenNLP's sentence predictors do."""

    warm_up_input = {"sentence": "warm up"}

    def __init__(self, model: Model, dataset_reader: DatasetReader, language: str = "en_core_web_sm",
                 frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        from distrain.data.tokenizers.spacy import SpacyTokenizer

        self._tokenizer = SpacyTokenizer(language=language)

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})


@Predictor.register("sentence_tagger")
class SentenceTaggerPredictor(SpacySentencePredictor):
    """For any tagger (``simple_tagger``, ``crf_tagger``): the tagger's reader makes the instance of spaCy's
    words."""

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        return self._dataset_reader.text_to_instance(self._tokenizer.tokenize(self.required(json_dict, "sentence")))
