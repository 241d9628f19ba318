"""Extractive QA over a transformers encoder (AllenNLP's ``transformer_qa`` keys): start/end logits per token.

An instance is one question with all its context windows (see ``transformer_squad``). The answer is the best
legal span over all windows: start <= end, at most ``max_span_length`` tokens, inside the context; its
characters come from the tokenizer's offsets, so ``best_span_str`` is exactly ``context[start:end]``.
"""

from __future__ import annotations

from typing import Any

import torch

from distrain.config.constraints import PositiveInt
from distrain.data.fields import IGNORED_LABEL
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.boolean_accuracy import BooleanAccuracy
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.zoo.rc.metrics.squad_em_and_f1 import SquadEmAndF1
from distrain.models.model import Model
from distrain.modules.pretrained_transformer import PretrainedTransformerEncoder
from distrain.pretrained import PretrainedName


@Model.register("transformer_qa")
class TransformerQA(Model):
    """The loss is the mean over questions of the mean start/end cross-entropy over a question's trained
    windows, so any split of a global batch among workers gives the same gradient.

    Metrics: ``per_instance_em`` and ``per_instance_f1`` (AllenNLP's names; here an instance is a question), and
    AllenNLP's per-window ``start_acc``, ``end_acc`` and ``span_acc`` over the windows that hold the answer, each
    window's best span taken among [CLS] and its context tokens as AllenNLP's ``get_best_span`` does."""

    #: AllenNLP's names (see :mod:`distrain.experiment.archive.allennlp`): its embedder holds the transformer,
    #: whose pooler (unused by the spans) and position ids (a constant) distrain does not keep
    allennlp_names = {r"_text_field_embedder\.token_embedder_tokens\.transformer_model": "encoder.transformer",
                      "_linear_layer": "qa_outputs"}
    allennlp_unused = (r"\.pooler\.", r"\.position_ids$")
    default_predictor = "transformer_qa"

    def __init__(self, vocab: Vocabulary, transformer_model_name: PretrainedName = "bert-base-cased",
                 max_span_length: PositiveInt = 512) -> None:
        super().__init__(vocab, {"start_acc": CategoricalAccuracy(), "end_acc": CategoricalAccuracy(),
                                 "span_acc": BooleanAccuracy(), "per_instance": SquadEmAndF1()})
        self.max_span_length = max_span_length
        self.encoder = PretrainedTransformerEncoder(transformer_model_name)
        self.qa_outputs = torch.nn.Linear(self.encoder.output_dim, 2)

    def shard_units(self) -> list[str]:
        return self.encoder.layer_patterns("encoder")

    def forward(self, question_with_context: torch.Tensor, type_ids: torch.Tensor, attention_mask: torch.Tensor,
                context_mask: torch.Tensor, metadata: list[dict] | None = None, span_start: torch.Tensor | None = None,
                span_end: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        windows = attention_mask[:, :, 0] > 0  # (questions, windows): which windows exist
        transformer = self.encoder.transformer
        hidden = transformer(input_ids=question_with_context[windows], attention_mask=attention_mask[windows],
                             token_type_ids=type_ids[windows]).last_hidden_state
        logits = self.qa_outputs(hidden).float()
        padding = attention_mask[windows] == 0
        start_logits = logits[..., 0].masked_fill(padding, -1e7)
        end_logits = logits[..., 1].masked_fill(padding, -1e7)
        # AllenNLP's output names: each window's scores (padding at -1e7)
        output: dict[str, Any] = {"span_start_logits": start_logits, "span_end_logits": end_logits,
                                  "window_logits": logits}  # raw, padding included: AllenNLP's probabilities
        if span_start is not None and span_end is not None:
            output["loss"] = self._loss(start_logits, end_logits, span_start[windows], span_end[windows], windows)
            self._window_accuracies(start_logits.detach(), end_logits.detach(), context_mask[windows] > 0,
                                    span_start[windows], span_end[windows])
        if metadata is not None:
            spans = best_spans(start_logits.detach(), end_logits.detach(), context_mask[windows] > 0,
                               windows.sum(1).tolist(), self.max_span_length)
            output.update(answers(spans, metadata))
            self.metrics["per_instance"](output["best_span_str"], [item["answers"] for item in metadata])
        return output

    def _window_accuracies(self, start_logits: torch.Tensor, end_logits: torch.Tensor, context: torch.Tensor,
                           starts: torch.Tensor, ends: torch.Tensor) -> None:
        answerable = context.clone()
        answerable[:, 0] = True  # [CLS]: AllenNLP's answer for a window without one
        start_logits = start_logits.masked_fill(~answerable, float("-inf"))
        end_logits = end_logits.masked_fill(~answerable, float("-inf"))
        scored = starts != IGNORED_LABEL
        self.metrics["start_acc"](start_logits, starts, scored)
        self.metrics["end_acc"](end_logits, ends, scored)
        spans = best_spans(start_logits, end_logits, answerable, [1] * len(starts), start_logits.shape[1])
        predicted = torch.tensor([[span[1], span[2]] if span else [-1, -1] for span in spans], device=starts.device)
        self.metrics["span_acc"](predicted, torch.stack([starts, ends], 1), scored[:, None].expand(-1, 2))

    @staticmethod
    def _loss(start_logits, end_logits, starts, ends, windows) -> torch.Tensor:
        cross_entropy = torch.nn.functional.cross_entropy
        per_window = (cross_entropy(start_logits, starts, ignore_index=IGNORED_LABEL, reduction="none")
                      + cross_entropy(end_logits, ends, ignore_index=IGNORED_LABEL, reduction="none")) / 2
        counted = (starts != IGNORED_LABEL).to(per_window.dtype)
        question = torch.zeros(windows.shape, dtype=per_window.dtype, device=per_window.device)
        weight = torch.zeros_like(question)
        question[windows] = per_window * counted
        weight[windows] = counted
        return (question.sum(1) / weight.sum(1).clamp(min=1)).mean()

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        return {key: output[key] for key in ("id", "best_span_str", "best_span") if key in output}


def best_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, context: torch.Tensor,
               windows_per_question: list[int], max_span_length: int) -> list[tuple[int, int, int] | None]:
    """Per question, ``(window, start token, end token)`` of the highest start + end score over its windows
    among spans with start <= end < start + ``max_span_length`` that lie inside the context (None: an empty
    context has no span)."""
    length = start_logits.shape[1]
    positions = torch.arange(length, device=start_logits.device)
    offset = positions[None, :] - positions[:, None]  # end - start
    legal = (offset >= 0) & (offset < max_span_length)
    scores = start_logits[:, :, None] + end_logits[:, None, :]
    allowed = legal[None] & context[:, :, None] & context[:, None, :]
    scores = scores.masked_fill(~allowed, float("-inf")).reshape(scores.shape[0], -1)
    best_score, best_flat = scores.max(1)
    results, first = [], 0
    for count in windows_per_question:
        window = first + int(best_score[first: first + count].argmax())
        flat = int(best_flat[window])
        legal = bool(torch.isfinite(best_score[window]))
        results.append((window - first, flat // length, flat % length) if legal else None)
        first += count
    return results


def answers(spans: list[tuple[int, int, int] | None], metadata: list[dict]) -> dict[str, list]:
    """Token spans as character offsets of the context and the context's text there ("" at [0, 0]: no span)."""
    strings, offsets, ids = [], [], []
    for span, item in zip(spans, metadata):
        ids.append(item["id"])
        if span is None:
            strings.append("")
            offsets.append([0, 0])
            continue
        window, start, end = span
        token_offsets = item["offsets"][window]
        begin = token_offsets[start - item["context_start"]][0]
        finish = token_offsets[end - item["context_start"]][1]
        strings.append(item["context"][begin:finish])
        offsets.append([begin, finish])
    return {"best_span_str": strings, "best_span": offsets, "id": ids}
