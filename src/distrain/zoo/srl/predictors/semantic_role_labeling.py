"""``semantic_role_labeling``: ``{"sentence": ...}`` to the roles of each of its predicates, as AllenNLP's predictor of
that name answers: ``{"words": [...], "verbs": [{"verb", "description", "tags"}, ...]}``, one frame per word spaCy
tags ``VERB`` (or, for English, ``AUX``), the model run once per predicate."""

from __future__ import annotations

from typing import Any

from distrain.data.fields import Instance
from distrain.data.reader import RecordError
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict, sanitize
from distrain.predictors.sentence_tagger import SpacySentencePredictor


@Predictor.register("semantic_role_labeling")
class SemanticRoleLabelerPredictor(SpacySentencePredictor):
    """For ``srl`` and ``srl_bert``. spaCy's tags pick the predicates: without a spaCy model package (none
    installs from PyPI; ``spacy.blank`` tags nothing) a sentence has none and only its words come back."""

    one_instance_per_input = False

    def predict_tokenized(self, tokenized_sentence: list[str]) -> JsonDict:
        """The frames of a sentence already split into words (spaCy only tags them)."""
        from spacy.tokens import Doc

        from distrain.data.tokenizer import Token

        nlp = self._tokenizer.nlp
        doc = Doc(nlp.vocab, words=list(tokenized_sentence))
        for _, pipe in nlp.pipeline:
            doc = pipe(doc)
        tokens = [Token(token.text, token.idx, pos_=token.pos_, tag_=token.tag_) for token in doc]
        return self._frames(tokens, self.tokens_to_instances(tokens), None)

    def tokens_to_instances(self, tokens: list[Any]) -> list[Instance]:
        """One instance per predicate: the sentence with that word as the verb."""
        english = self._tokenizer.language.startswith("en_")
        return [self._dataset_reader.text_to_instance(tokens, [int(i == position) for i in range(len(tokens))])
                for position, token in enumerate(tokens)
                if token.pos_ == "VERB" or (english and token.pos_ == "AUX")]

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        tokens = self._sentence_tokens(inputs)
        return self._frames(tokens, self.tokens_to_instances(tokens), None)

    def predict_batch_json(self, inputs: list[JsonDict]) -> list[JsonDict]:
        """Every sentence's predicates run in batches of ``len(inputs)`` instances, as AllenNLP's predictor runs them."""
        sentences = [self._sentence_tokens(item) for item in inputs]
        per_sentence = [self.tokens_to_instances(tokens) for tokens in sentences]
        flat = [instance for instances in per_sentence for instance in instances]
        outputs = [output for start in range(0, len(flat), len(inputs))
                   for output in self._model_outputs(flat[start:start + len(inputs)])]
        answers, used = [], 0
        for tokens, instances in zip(sentences, per_sentence):
            answers.append(self._frames(tokens, instances, outputs[used:used + len(instances)]))
            used += len(instances)
        return answers

    def validate_json(self, json_dict: JsonDict) -> None:
        self._sentence_tokens(json_dict)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        raise NotImplementedError("semantic_role_labeling answers a sentence with one instance per predicate: "
                                  "use predict_json, predict_batch_json or predict_tokenized")

    def _sentence_tokens(self, inputs: JsonDict) -> list[Any]:
        sentence = self.required(inputs, "sentence")
        if not isinstance(sentence, str):
            raise RecordError(f'"sentence" must be a string, got {type(sentence).__name__}', "sentence")
        return self._tokenizer.tokenize(sentence)

    def _model_outputs(self, instances: list[Instance]) -> list[JsonDict]:
        return self._run(instances) if instances else []

    def _frames(self, tokens: list[Any], instances: list[Instance], outputs: list[JsonDict] | None) -> JsonDict:
        """The sentence's words and one frame per predicate's output (its verb, tags and bracketed description)."""
        outputs = self._model_outputs(instances) if outputs is None else outputs
        if not outputs:
            return sanitize({"verbs": [], "words": [token.text for token in tokens]})
        return sanitize({"verbs": [{"verb": output["verb"], "description": srl_string(output["words"], output["tags"]),
                                    "tags": output["tags"]} for output in outputs],
                         "words": outputs[0]["words"]})


def srl_string(words: list[str], tags: list[str]) -> str:
    """The sentence with each role's words bracketed and named: ``The cat [V: sat] [ARG2: on the mat]``; a stray
    ``I-`` tag continues whatever is open, as in AllenNLP's."""
    frame: list[str] = []
    chunk: list[str] = []
    for word, tag in zip(words, tags):
        if tag.startswith("I-"):
            chunk.append(word)
            continue
        if chunk:
            frame.append("[" + " ".join(chunk) + "]")
            chunk = []
        if tag.startswith("B-"):
            chunk.append(f"{tag[2:]}: {word}")
        elif tag == "O":
            frame.append(word)
    if chunk:
        frame.append("[" + " ".join(chunk) + "]")
    return " ".join(frame)
