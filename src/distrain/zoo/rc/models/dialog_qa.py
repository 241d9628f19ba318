"""Dialog QA (Choi et al., 2018, QuAC's baseline; AllenNLP's ``dialog_qa``): answer each turn of a dialog about one
passage with a span of it, whether it is a yes/no question and whether to follow up; read from ``quac`` instances.

BiDAF with self-attention and a residual layer (Clark and Gardner, 2018). Every turn sees its own copy of the
passage: with ``num_context_answers`` k > 0 the passage words carry embeddings of the previous k answers' markers
and the question words an embedding of the turn's number, so the phrase layer reads embedder + k × marker widths.
The yes/no and follow-up logits are read at the answer's last token.

The loss is AllenNLP's: the start, end, yes/no and follow-up cross-entropies, each a mean over the batch's turns
(padding turns ignored). Their count is ``loss_weight``, so a global batch of dialogs split among workers gives the
one-process gradient. Metrics are AllenNLP's: ``start_acc``, ``end_acc``, ``span_acc``, ``yesno``, ``followup``
(accuracies over turns) and ``f1`` (QuAC's F1 ×100, a mean over turns; against the other references when there are
several). All hold counts, so they sync exactly.
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

import torch
from annotated_types import Ge, Le

from distrain.config.constraints import NonNegativeInt, PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.average import Average
from distrain.metrics.boolean_accuracy import BooleanAccuracy
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.zoo.rc.metrics.squad_em_and_f1 import token_f1
from distrain.models.model import Model
from distrain.zoo.rc.models.bidaf import bidaf_attention
from distrain.modules.augmented_lstm import variational_dropout
from distrain.modules.masked_softmax import masked_softmax
from distrain.modules.matrix_attentions.linear import LinearMatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import input_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask


@Model.register("dialog_qa")
class DialogQA(Model):
    """The encoders' input widths follow from the embedder and the phrase layer (stated ones are checked before data
    is read): phrase layer = embedder + ``num_context_answers`` × ``marker_embedding_dim``, residual and span start
    encoders = phrase, span end encoder = phrase + span start; the residual, span start and span end encoders give
    the phrase layer's width. A best span is at most ``max_span_length`` tokens past its start; a dialog has at most
    ``max_turn_length`` turns when ``num_context_answers`` > 0."""

    default_predictor = "dialog_qa"

    #: AllenNLP wraps the follow-up layer twice (``_followup_lin`` and ``_span_followup_predictor``): one here
    allennlp_names = {"_span_followup_predictor": "followup_lin"}

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, phrase_layer: Lazy[Seq2SeqEncoder],
                 residual_encoder: Lazy[Seq2SeqEncoder], span_start_encoder: Lazy[Seq2SeqEncoder],
                 span_end_encoder: Lazy[Seq2SeqEncoder], dropout: Probability = 0.2,
                 num_context_answers: Annotated[int, Ge(0), Le(3)] = 0, marker_embedding_dim: PositiveInt = 10,
                 max_span_length: NonNegativeInt = 30, max_turn_length: PositiveInt = 12) -> None:
        super().__init__(vocab, {"start_acc": CategoricalAccuracy(), "end_acc": CategoricalAccuracy(),
                                 "span_acc": BooleanAccuracy(), "yesno": CategoricalAccuracy(),
                                 "followup": CategoricalAccuracy(), "f1": Average()})
        self.num_context_answers = num_context_answers
        self.max_span_length = max_span_length
        self.text_field_embedder = text_field_embedder
        embedding = text_field_embedder.get_output_dim()
        self.phrase_layer = phrase_layer.construct(input_dim=embedding + marker_embedding_dim * num_context_answers)
        width = self.encoding_dim = self.phrase_layer.get_output_dim()
        self.matrix_attention = LinearMatrixAttention(width, width, "x,y,x*y")
        self.merge_atten = torch.nn.Linear(4 * width, width)
        self.residual_encoder = residual_encoder.construct(input_dim=width)
        if num_context_answers > 0:
            self.question_num_marker = torch.nn.Embedding(max_turn_length, marker_embedding_dim * num_context_answers)
            self.prev_ans_marker = torch.nn.Embedding(num_context_answers * 4 + 1, marker_embedding_dim)
        self.self_attention = LinearMatrixAttention(width, width, "x,y,x*y")
        self.followup_lin = torch.nn.Linear(width, 3)
        self.merge_self_attention = torch.nn.Linear(3 * width, width)
        self.span_start_encoder = span_start_encoder.construct(input_dim=width)
        self.span_end_encoder = span_end_encoder.construct(
            input_dim=width + self.span_start_encoder.get_output_dim())
        self.span_start_predictor = torch.nn.Linear(width, 1)
        self.span_end_predictor = torch.nn.Linear(width, 1)
        self.span_yesno_predictor = torch.nn.Linear(width, 3)
        self.dropout_probability = dropout

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Each encoder's stated input width against what feeds it, and each later encoder's output against the
        phrase layer's (the attention and the predictors are built that wide)."""
        embedding = output_dim(arguments.get("text_field_embedder"))
        context = int(arguments.get("num_context_answers") or 0) * int(arguments.get("marker_embedding_dim") or 10)
        phrase = arguments.get("phrase_layer")
        problems = input_problems(phrase, None if embedding is None else embedding + context, "phrase_layer",
                                  "the text_field_embedder" + (" + num_context_answers × marker_embedding_dim"
                                                               if context else ""))
        width = output_dim(phrase, None if embedding is None else embedding + context)
        if width is None:
            return problems
        for name in ("residual_encoder", "span_start_encoder"):
            problems += input_problems(arguments.get(name), width, name, "the phrase_layer")
        start = output_dim(arguments.get("span_start_encoder"), width)
        if start is not None:
            problems += input_problems(arguments.get("span_end_encoder"), width + start, "span_end_encoder",
                                       "the phrase_layer + the span_start_encoder")
        for name in ("residual_encoder", "span_start_encoder", "span_end_encoder"):
            given = output_dim(arguments.get(name), None)
            if given is not None and given != width:
                problems.append(Problem(name, f"gives {given}, but must give the phrase_layer's width, {width}"))
        return problems

    def forward(self, question: TextFieldTensors, passage: TextFieldTensors, span_start: torch.Tensor | None = None,
                span_end: torch.Tensor | None = None, p1_answer_marker: torch.Tensor | None = None,
                p2_answer_marker: torch.Tensor | None = None, p3_answer_marker: torch.Tensor | None = None,
                yesno_list: torch.Tensor | None = None, followup_list: torch.Tensor | None = None,
                metadata: list[dict] | None = None, **_: Any) -> dict[str, Any]:
        # every turn is a row of its own: (dialogs, turns, ...) → (dialogs × turns, ...)
        batch, turns = next(iter(next(iter(question.values())).values())).shape[:2]
        questions = {name: {key: tensor.flatten(0, 1) for key, tensor in tensors.items()}
                     for name, tensors in question.items()}
        question_mask = get_text_field_mask(questions)
        passage_mask = get_text_field_mask(passage)
        length = passage_mask.shape[1]
        rows_mask = passage_mask.unsqueeze(1).expand(batch, turns, length).reshape(batch * turns, length)
        turn_mask = (followup_list.reshape(-1) >= 0 if followup_list is not None
                     else question_mask.any(-1))
        embedded_question = self._dropout(self.text_field_embedder(questions))
        embedded_passage = self._dropout(self.text_field_embedder(passage))
        if self.num_context_answers > 0:
            turn = torch.arange(turns, device=question_mask.device)
            turn = turn.view(1, turns, 1).expand(batch, turns, question_mask.shape[1]).reshape(batch * turns, -1)
            embedded_question = torch.cat([embedded_question, self.question_num_marker(turn)], -1)
            rows = embedded_passage.unsqueeze(1).expand(batch, turns, *embedded_passage.shape[1:])
            pieces = [rows.reshape(batch * turns, length, -1)]
            markers = (p1_answer_marker, p2_answer_marker, p3_answer_marker)[: self.num_context_answers]
            if any(marker is None for marker in markers):
                raise ValueError(f"num_context_answers is {self.num_context_answers}: the previous answers' "
                                 f"markers (p1_answer_marker, …) are needed")
            pieces += [self.prev_ans_marker(marker.reshape(batch * turns, length)) for marker in markers]
            encoded_passage = self._dropout(self.phrase_layer(torch.cat(pieces, -1), rows_mask))
        else:
            encoded = self._dropout(self.phrase_layer(embedded_passage, passage_mask))
            encoded_passage = encoded.unsqueeze(1).expand(batch, turns, length, self.encoding_dim)
            encoded_passage = encoded_passage.reshape(batch * turns, length, self.encoding_dim)
        encoded_question = self._dropout(self.phrase_layer(embedded_question, question_mask))

        attended, _ = bidaf_attention(self.matrix_attention, encoded_passage, encoded_question, rows_mask,
                                      question_mask)
        merged = torch.relu(self.merge_atten(attended))
        residual = self._dropout(self.residual_encoder(merged, rows_mask))
        merged = self._dropout(merged + self._self_attend(residual, rows_mask))
        start_rep = self.span_start_encoder(merged, rows_mask)
        start_logits = self.span_start_predictor(start_rep).squeeze(-1)
        end_rep = self.span_end_encoder(torch.cat([merged, start_rep], -1), rows_mask)
        end_logits = self.span_end_predictor(end_rep).squeeze(-1)
        yesno_logits = self.span_yesno_predictor(end_rep)
        followup_logits = self.followup_lin(end_rep)
        lowest = torch.finfo(start_logits.dtype).min  # AllenNLP's mask value: padding never wins a max
        start_logits = start_logits.masked_fill(~rows_mask, lowest)
        end_logits = end_logits.masked_fill(~rows_mask, lowest)
        best_span = best_span_yesno_followup(start_logits, end_logits, yesno_logits, followup_logits,
                                             self.max_span_length)

        output: dict[str, Any] = {
            "span_start_logits": start_logits.view(batch, turns, length),
            "span_end_logits": end_logits.view(batch, turns, length),
            "best_span": best_span.view(batch, turns, 4)}
        if all(labels is not None for labels in (span_start, span_end, yesno_list, followup_list)):
            output.update(self._loss(start_logits, end_logits, yesno_logits, followup_logits, best_span,
                                     span_start.reshape(-1), span_end.reshape(-1), yesno_list.reshape(-1),
                                     followup_list.reshape(-1), turn_mask))
        if metadata is not None:
            output.update(self._answers(best_span.view(batch, turns, 4), metadata))
        return output

    def _dropout(self, tensor: torch.Tensor) -> torch.Tensor:
        return variational_dropout(tensor, self.dropout_probability, self.training)

    def _self_attend(self, residual: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each passage word's summary of the other words (never itself), merged with it: the residual."""
        length = mask.shape[1]
        pairs = mask.unsqueeze(2) & mask.unsqueeze(1)
        pairs = pairs & ~torch.eye(length, dtype=torch.bool, device=mask.device).unsqueeze(0)
        attended = torch.matmul(masked_softmax(self.self_attention(residual, residual), pairs), residual)
        return torch.relu(self.merge_self_attention(torch.cat([attended, residual, residual * attended], -1)))

    def _loss(self, start_logits: torch.Tensor, end_logits: torch.Tensor, yesno_logits: torch.Tensor,
              followup_logits: torch.Tensor, best_span: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor,
              yesno: torch.Tensor, followup: torch.Tensor, turn_mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """The four cross-entropies (means over the real turns: padding ones are -1) and the metrics."""
        log_softmax, nll = torch.nn.functional.log_softmax, torch.nn.functional.nll_loss
        rows = torch.arange(len(ends), device=ends.device)
        at_gold_end = ends.clamp(min=0)  # a padding turn's end is -1: it is ignored, any position serves
        loss = (nll(log_softmax(start_logits, -1), starts, ignore_index=-1)
                + nll(log_softmax(end_logits, -1), ends, ignore_index=-1)
                + nll(log_softmax(yesno_logits[rows, at_gold_end], -1), yesno, ignore_index=-1)
                + nll(log_softmax(followup_logits[rows, at_gold_end], -1), followup, ignore_index=-1))
        self.metrics["start_acc"](start_logits.detach(), starts, turn_mask)
        self.metrics["end_acc"](end_logits.detach(), ends, turn_mask)
        self.metrics["span_acc"](best_span[:, :2], torch.stack([starts, ends], -1),
                                 turn_mask.unsqueeze(1).expand(-1, 2))
        predicted_end = best_span[:, 1]
        self.metrics["yesno"](yesno_logits[rows, predicted_end].detach(), yesno, turn_mask)
        self.metrics["followup"](followup_logits[rows, predicted_end].detach(), followup, turn_mask)
        return {"loss": loss, "loss_weight": (starts >= 0).sum()}

    def _answers(self, best_span: torch.Tensor, metadata: list[dict]) -> dict[str, list]:
        """Each turn's answer text, id, yes/no and follow-up ids; QuAC's F1 of each answered turn."""
        answers: dict[str, list] = {"best_span_str": [], "qid": [], "yesno": [], "followup": []}
        for spans, item in zip(best_span.tolist(), metadata):
            offsets, passage = item["token_offsets"], item["original_passage"]
            ids = item.get("instance_id") or [None] * len(item["question_tokens"])
            references = item.get("answer_texts_list") or [[] for _ in ids]
            texts = [passage[offsets[start][0]: offsets[end][1]] for start, end, _, _ in spans[: len(ids)]]
            f1 = 0.0  # AllenNLP's: a turn without references repeats the one before's score
            for text, golds in zip(texts, references):
                if golds:
                    f1 = quac_f1(text, golds)
                self.metrics["f1"](100 * f1)
            answers["best_span_str"].append(texts)
            answers["qid"].append(list(ids))
            answers["yesno"].append([span[2] for span in spans[: len(ids)]])
            answers["followup"].append([span[3] for span in spans[: len(ids)]])
        return answers

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return {name: self.metrics[name].get_metric(reset)
                for name in ("start_acc", "end_acc", "span_acc", "yesno", "followup", "f1")}

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        """The yes/no and follow-up ids as their labels (``y``, ``n``, ``x``; ``y``, ``m``, ``n``)."""
        readable = dict(output)
        for key, namespace in (("yesno", "yesno_labels"), ("followup", "followup_labels")):
            if key in output:
                readable[key] = [[self.vocab.get_token_from_index(index, namespace) for index in dialog]
                                 for dialog in output[key]]
        return readable


def quac_f1(prediction: str, references: list[str]) -> float:
    """QuAC's F1: the best token F1 over the references, or with several, its mean over leaving each one out."""
    if len(references) == 1:
        return max(token_f1(prediction, gold) for gold in references)
    scores = [max(token_f1(prediction, gold) for gold in references[:left] + references[left + 1:])
              for left in range(len(references))]
    return sum(scores) / len(scores)


def best_span_yesno_followup(start_logits: torch.Tensor, end_logits: torch.Tensor, yesno_logits: torch.Tensor,
                             followup_logits: torch.Tensor, max_span_length: int) -> torch.Tensor:
    """``(rows, 4)``: the best span's start and end, and the yes/no and follow-up classes at its end.

    AllenNLP's scan, vectorised: at each end, the best start so far (its first occurrence); among the ends whose
    start lies at most ``max_span_length`` before them, the first of the highest start + end score."""
    rows, length = start_logits.shape
    positions = torch.arange(length, device=start_logits.device).expand(rows, length)
    best_so_far = start_logits.cummax(-1).values
    earlier_best = torch.cat([torch.full_like(best_so_far[:, :1], float("-inf")), best_so_far[:, :-1]], -1)
    is_new_best = start_logits > earlier_best
    start_of = torch.where(is_new_best, positions, torch.zeros_like(positions)).cummax(-1).values
    scores = best_so_far + end_logits
    scores = scores.masked_fill(positions - start_of > max_span_length, float("-inf"))
    end = scores.argmax(-1)
    picked = torch.arange(rows, device=end.device)
    return torch.stack([start_of[picked, end], end, yesno_logits[picked, end].argmax(-1),
                        followup_logits[picked, end].argmax(-1)], -1)
