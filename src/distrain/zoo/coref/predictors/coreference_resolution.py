"""``coreference_resolution``: ``{"document": ...}`` to its coreference clusters, as AllenNLP's predictor of that name
answers: the document's words, the kept spans, each one's candidate and chosen antecedents, and the clusters as
inclusive ``[start, end]`` word spans."""

from __future__ import annotations

from typing import Any

from distrain.data.fields import Instance
from distrain.data.reader import DatasetReader, RecordError
from distrain.models.model import Model
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict


@Predictor.register("coreference_resolution")
class CorefPredictor(Predictor):
    """For ``coref``: the document is split into sentences and words by spaCy (``language``: the model package's
    parse where it is installed, else spaCy's rule-based sentencizer) and the coreference reader makes the
    instance of those sentences."""

    #: what AllenNLP's model answers (distrain's also gives the antecedent scores and the kept spans' mask)
    answered = ("top_spans", "antecedent_indices", "predicted_antecedents", "document", "clusters")

    def __init__(self, model: Model, dataset_reader: DatasetReader, language: str = "en_core_web_sm",
                 frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._language = language

    @property
    def nlp(self) -> Any:
        from distrain.data.sentence_splitters.spacy import sentence_pipeline

        return sentence_pipeline(self._language)

    def predict(self, document: str) -> JsonDict:
        return self.predict_json({"document": document})

    def predict_tokenized(self, tokenized_document: list[str]) -> JsonDict:
        """The clusters of a document already split into words (spaCy only finds its sentences)."""
        from spacy.tokens import Doc

        doc = Doc(self.nlp.vocab, words=list(tokenized_document))
        for _, pipe in self.nlp.pipeline:
            doc = pipe(doc)
        return self.predict_instance(self._sentences_to_instance(doc))

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        document = self.required(json_dict, "document")
        if not isinstance(document, str):
            raise RecordError(f'"document" must be a string, got {type(document).__name__}', "document")
        return self._sentences_to_instance(self.nlp(document))

    def _sentences_to_instance(self, doc: Any) -> Instance:
        return self._dataset_reader.text_to_instance([[token.text for token in sentence] for sentence in doc.sents])

    def _run(self, instances: list[Instance]) -> list[JsonDict]:
        return [{key: output[key] for key in self.answered if key in output} for output in super()._run(instances)]
