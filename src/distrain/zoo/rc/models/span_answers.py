"""What extractive readers (``bidaf``, ``qanet``) share once they have span scores: the loss, SQuAD's metrics and
the answers as passage text, in AllenNLP's names."""

from __future__ import annotations

from typing import Any

import torch

from distrain.metrics.boolean_accuracy import BooleanAccuracy
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.metrics.metric import Metric
from distrain.zoo.rc.metrics.squad_em_and_f1 import SquadEmAndF1


def span_metrics() -> dict[str, Metric]:
    """AllenNLP's ``start_acc``, ``end_acc``, ``span_acc`` and SQuAD's ``em`` and ``f1`` (as ``squad``)."""
    return {"start_acc": CategoricalAccuracy(), "end_acc": CategoricalAccuracy(), "span_acc": BooleanAccuracy(),
            "squad": SquadEmAndF1()}


def score_spans(output: dict[str, Any], metrics: dict[str, Metric], span_start: torch.Tensor | None,
                span_end: torch.Tensor | None, metadata: list[dict] | None) -> None:
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
        output.update(answer_strings(best_span, metadata))
        scored = [(text, item["answer_texts"]) for text, item in zip(output["best_span_str"], metadata)
                  if item.get("answer_texts")]
        if scored:
            metrics["squad"](*zip(*scored))


def span_metric_values(metrics: dict[str, Metric], reset: bool) -> dict[str, float]:
    values = {name: metrics[name].get_metric(reset) for name in ("start_acc", "end_acc", "span_acc")}
    values.update(metrics["squad"].get_metric(reset))  # "em" and "f1", AllenNLP's names
    return values


def answer_strings(best_span: torch.Tensor, metadata: list[dict]) -> dict[str, list]:
    """Each predicted token span as the passage's text between its first and last token's characters."""
    strings = []
    for (start, end), item in zip(best_span.tolist(), metadata):
        offsets = item["token_offsets"]
        strings.append(item["original_passage"][offsets[start][0]: offsets[end][1]])
    return {"best_span_str": strings, "id": [item.get("id") for item in metadata],
            "question_tokens": [item["question_tokens"] for item in metadata],
            "passage_tokens": [item["passage_tokens"] for item in metadata]}
