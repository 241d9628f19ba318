"""``transformer_qa``: ``{"question": ..., "context": ...}`` (or ``"passage"``) to a transformer QA model's answer, as
AllenNLP's predictor of that name answers it.

AllenNLP makes one instance per context window and, per question, answers with the outputs of the window whose best
span scores highest (the first on ties), [CLS] counting as a span (the empty answer). distrain's reader keeps a
question's windows in one instance; this predictor reads each window's raw scores from the model and answers with
AllenNLP's keys and numbers: the window's start/end logits (everything outside [CLS] and the context at float32's
lowest value), their softmax over the batch's padded length (AllenNLP's probabilities include the padding),
``best_span`` in the window's context tokens (``[-1, -1]`` for [CLS]), ``best_span_scores``, ``best_span_probs``,
``best_span_str``, the window's ``context_tokens`` (word pieces) and the question id, numbered from 1 per predictor.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.data.fields import Instance
from distrain.models.model import forward_batch
from distrain.predictors.predictor import Predictor
from distrain.predictors.sanitize import JsonDict, sanitize
from distrain.zoo.rc.modules.best_span import get_best_span


@Predictor.register("transformer_qa")
class TransformerQAPredictor(Predictor):
    """For ``transformer_qa`` over a ``transformer_squad`` reader; the answer is under ``best_span_str``."""

    def __init__(self, model: Any, dataset_reader: Any, frozen: bool = True) -> None:
        super().__init__(model, dataset_reader, frozen)
        self._next_qid = 1

    def predict(self, question: str, passage: str) -> JsonDict:
        return self.predict_json({"context": passage, "question": question})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """The question with every window of its context; AllenNLP's question id (a counter: an ``"id"`` in the
        input is not read, as in AllenNLP)."""
        question = self.required(json_dict, "question")
        context = json_dict["passage"] if isinstance(json_dict, dict) and "passage" in json_dict \
            else self.required(json_dict, "context")
        instance = self._dataset_reader.text_to_instance(question, context, None, None, str(self._next_qid))
        self._next_qid += 1
        return instance

    def validate_json(self, json_dict: JsonDict) -> None:
        self.required(json_dict, "question")
        if not (isinstance(json_dict, dict) and "passage" in json_dict):
            self.required(json_dict, "context")

    def _run(self, instances: list[Instance]) -> list[JsonDict]:
        with self._model.metrics_frozen():
            output = forward_batch(self._model, instances)
        logits = output["window_logits"].float().cpu()
        cls_index = self._dataset_reader.pair_layout.cls_index
        answers, window = [], 0
        for instance in instances:
            metadata = instance["metadata"].metadata
            best: JsonDict | None = None
            for ids, offsets in zip(instance["question_with_context"].values, metadata["offsets"]):
                answer = window_answer(logits[window], cls_index, metadata["context_start"], offsets,
                                       metadata["context"])
                answer["context_tokens"] = self._dataset_reader.tokenizer.convert_ids_to_tokens(
                    [int(i) for i in ids[metadata["context_start"]: metadata["context_start"] + len(offsets)]])
                if best is None or best["best_span_scores"] < answer["best_span_scores"]:
                    best = answer
                window += 1
            answers.append(sanitize({**best, "id": metadata["id"]}))
        return answers


def window_answer(logits: torch.Tensor, cls_index: int, context_start: int, offsets: list[list[int]],
                  context: str) -> dict[str, Any]:
    """AllenNLP's ``TransformerQA`` outputs for one window from its raw ``(tokens, 2)`` scores: spans may start
    and end at [CLS] or in the context only."""
    start_raw, end_raw = logits[:, 0], logits[:, 1]
    possible = torch.zeros(len(logits), dtype=torch.bool)
    possible[context_start: context_start + len(offsets)] = True
    possible[cls_index] = True
    lowest = torch.finfo(logits.dtype).min
    start, end = start_raw.masked_fill(~possible, lowest), end_raw.masked_fill(~possible, lowest)
    start_probs, end_probs = torch.softmax(start_raw, -1), torch.softmax(end_raw, -1)
    first, last = (int(i) for i in get_best_span(start[None], end[None])[0])
    answer = {"span_start_logits": start, "span_end_logits": end, "span_start_probs": start_probs,
              "span_end_probs": end_probs, "best_span_scores": start[first] + end[last],
              "best_span_probs": start_probs[first] * end_probs[last]}
    if first == cls_index:
        return {**answer, "best_span": [-1, -1], "best_span_str": ""}
    first, last = first - context_start, last - context_start
    return {**answer, "best_span": [first, last], "best_span_str": context[offsets[first][0]: offsets[last][1]]}
