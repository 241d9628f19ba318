"""What extractive readers (``bidaf``, ``qanet``) share around their span scores: the forward pass's frame
(:class:`PassageSpanModel`), the loss, SQuAD's metrics and the answers as passage text, in AllenNLP's names."""

from __future__ import annotations

from typing import Any

import torch

from distrain.metrics.boolean_accuracy import BooleanAccuracy
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.models.model import Model
from distrain.modules.text_field_embedder import TextFieldTensors, get_text_field_mask
from distrain.zoo.rc.metrics.squad_em_and_f1 import SquadEmAndF1


class PassageSpanModel(Model):
    """An extractive reader's forward pass: both texts masked and encoded (``_encode``), the model's own span
    scores over the passage (``_span_scores``), then the loss, metrics and answers (:func:`score_spans`). Its
    outputs are AllenNLP's (what its predictors answer); ``id`` is distrain's, given where the input has one."""

    #: whether the outputs carry each passage token's character offsets (AllenNLP's BiDAF does, QANet not)
    outputs_token_offsets = False
    default_predictor = "reading_comprehension"

    def forward(self, question: TextFieldTensors, passage: TextFieldTensors, span_start: torch.Tensor | None = None,
                span_end: torch.Tensor | None = None, metadata: list[dict] | None = None,
                **_: Any) -> dict[str, Any]:
        question_mask, passage_mask = get_text_field_mask(question), get_text_field_mask(passage)
        encoded_question = self._encode(question, question_mask)
        encoded_passage = self._encode(passage, passage_mask)
        output = self._span_scores(encoded_question, encoded_passage, question_mask, passage_mask)
        score_spans(output, self.metrics, span_start, span_end, metadata, self.outputs_token_offsets)
        return output

    def _encode(self, text: TextFieldTensors, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _span_scores(self, question: torch.Tensor, passage: torch.Tensor, question_mask: torch.Tensor,
                     passage_mask: torch.Tensor) -> dict[str, Any]:
        """The output before scoring: at least the masked ``span_start_logits``, ``span_end_logits`` and the
        ``best_span`` they give."""
        raise NotImplementedError

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return span_metric_values(self.metrics, reset)

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        return dict(output)


def span_metrics() -> dict[str, Metric]:
    """AllenNLP's ``start_acc``, ``end_acc``, ``span_acc`` and SQuAD's ``em`` and ``f1`` (as ``squad``)."""
    return {"start_acc": CategoricalAccuracy(), "end_acc": CategoricalAccuracy(), "span_acc": BooleanAccuracy(),
            "squad": SquadEmAndF1()}


def score_spans(output: dict[str, Any], metrics: dict[str, Metric], span_start: torch.Tensor | None,
                span_end: torch.Tensor | None, metadata: list[dict] | None, token_offsets: bool = False) -> None:
    """Add the loss (gold spans given) and the answers' text (metadata given) to ``output``, which holds the masked
    ``span_start_logits``, ``span_end_logits`` and ``best_span``, and count them in ``metrics``."""
    start_logits, end_logits, best_span = output["span_start_logits"], output["span_end_logits"], output["best_span"]
    if span_start is not None and span_end is not None:
        starts, ends = span_start.reshape(-1), span_end.reshape(-1)
        log_softmax = torch.nn.functional.log_softmax
        output["loss"] = (torch.nn.functional.nll_loss(log_softmax(start_logits, -1), starts)
                          + torch.nn.functional.nll_loss(log_softmax(end_logits, -1), ends))
        metrics["start_acc"](start_logits.detach(), starts)
        metrics["end_acc"](end_logits.detach(), ends)
        metrics["span_acc"](best_span, torch.stack([starts, ends], -1))
    if metadata is not None:
        output.update(answer_strings(best_span, metadata, token_offsets))
        scored = [(text, item["answer_texts"]) for text, item in zip(output["best_span_str"], metadata)
                  if item.get("answer_texts")]
        if scored:
            metrics["squad"](*zip(*scored))


def span_metric_values(metrics: dict[str, Metric], reset: bool) -> dict[str, float]:
    values = {name: metrics[name].get_metric(reset) for name in ("start_acc", "end_acc", "span_acc")}
    values.update(metrics["squad"].get_metric(reset))  # "em" and "f1", AllenNLP's names
    return values


def answer_strings(best_span: torch.Tensor, metadata: list[dict], token_offsets: bool = False) -> dict[str, list]:
    """Each predicted token span as the passage's text between its first and last token's characters, with the
    tokens of both texts (and their offsets, ``token_offsets``), and the inputs' ``id`` where they have one."""
    strings = []
    for (start, end), item in zip(best_span.tolist(), metadata):
        offsets = item["token_offsets"]
        strings.append(item["original_passage"][offsets[start][0]: offsets[end][1]])
    answers = {"best_span_str": strings, "question_tokens": [item["question_tokens"] for item in metadata],
               "passage_tokens": [item["passage_tokens"] for item in metadata]}
    if token_offsets:
        answers["token_offsets"] = [item["token_offsets"] for item in metadata]
    if any(item.get("id") is not None for item in metadata):
        answers["id"] = [item.get("id") for item in metadata]
    return answers
