"""NAQANet (Dua et al., 2019; AllenNLP's ``naqanet``): QANet with "answering abilities" for DROP, answers that are
a passage span, a question span, a sum or difference of passage numbers, or a count.

QANet's layers (:class:`~distrain.zoo.rc.modules.qanet_layers.QaNetLayers`) give the modeled passage, here after
four runs of the modeling layer. Attention-weighted sums give one passage vector (of the first run) and one
question vector (of the question's own encoding, so the ability may be judged from the question's words alone); a
feedforward of both picks the ability. Each ability has its head: passage span starts from runs 1 and 2, ends from
runs 1 and 3; question spans from the question's encoding beside the passage vector; each number's sign (left out,
plus, minus) from runs 1 and 4 at its token beside the passage vector; a count 0-9 from the passage vector.

The loss marginalises, per question, over every way to the gold answer the ``drop`` reader found (all spans, sign
combinations and counts, each ability weighted by its probability), and is the mean over questions, so a global
batch split among workers gives the one-process gradient. The answer is the best of the ability the model picks;
``em`` and ``f1`` are DROP's (:class:`~distrain.zoo.rc.metrics.drop_em_and_f1.DropEmAndF1`).
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from distrain.config.constraints import NonNegativeInt, Probability
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.modules.feedforward import FeedForward
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.tensor_ops import logsumexp, masked_log_softmax
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.zoo.rc.metrics.drop_em_and_f1 import DropEmAndF1
from distrain.zoo.rc.modules.best_span import get_best_span
from distrain.zoo.rc.modules.qanet_layers import QaNetLayers

Ability = Literal["passage_span_extraction", "question_span_extraction", "addition_subtraction", "counting"]
ABILITIES = ("passage_span_extraction", "question_span_extraction", "addition_subtraction", "counting")


def _two_layers(input_dim: int, hidden: int, out: int, dropout: float = 0.0) -> FeedForward:
    return FeedForward([hidden, out], input_dim=input_dim, activations=["relu", "linear"], dropout=dropout,
                       num_layers=2)


def _lowest(tensor: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``tensor`` with masked entries at the dtype's lowest value (AllenNLP's "big negative number")."""
    return tensor.masked_fill(~mask, torch.finfo(tensor.dtype).min)


@Model.register("naqanet")
class NumericallyAugmentedQaNet(QaNetLayers, Model):
    """See the module doc; ``answering_abilities`` (AllenNLP's, all four by default) chooses the heads, in order."""

    default_predictor = "reading_comprehension"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, num_highway_layers: NonNegativeInt,
                 phrase_layer: Seq2SeqEncoder, matrix_attention_layer: MatrixAttention,
                 modeling_layer: Seq2SeqEncoder, dropout_prob: Probability = 0.1,
                 answering_abilities: list[Ability] | None = None) -> None:
        super().__init__(vocab)
        self.build_qanet_layers(text_field_embedder, num_highway_layers, phrase_layer, matrix_attention_layer,
                                modeling_layer, dropout_prob)
        self.answering_abilities = list(answering_abilities) if answering_abilities is not None else list(ABILITIES)
        encoding, modeled = phrase_layer.get_output_dim(), modeling_layer.get_output_dim()
        self.passage_weights_predictor = torch.nn.Linear(modeled, 1)
        self.question_weights_predictor = torch.nn.Linear(encoding, 1)
        if len(self.answering_abilities) > 1:
            self.answer_ability_predictor = _two_layers(modeled + encoding, modeled, len(self.answering_abilities),
                                                        dropout_prob)
        if "passage_span_extraction" in self.answering_abilities:
            self.passage_span_start_predictor = _two_layers(modeled * 2, modeled, 1)
            self.passage_span_end_predictor = _two_layers(modeled * 2, modeled, 1)
        if "question_span_extraction" in self.answering_abilities:
            self.question_span_start_predictor = _two_layers(modeled * 2, modeled, 1)
            self.question_span_end_predictor = _two_layers(modeled * 2, modeled, 1)
        if "addition_subtraction" in self.answering_abilities:
            self.number_sign_predictor = _two_layers(modeled * 3, modeled, 3)
        if "counting" in self.answering_abilities:
            self.count_number_predictor = _two_layers(modeled, modeled, 10)
        self.drop_metrics = DropEmAndF1()

    def forward(self, question: TextFieldTensors, passage: TextFieldTensors, number_indices: torch.Tensor,
                answer_as_passage_spans: torch.Tensor | None = None,
                answer_as_question_spans: torch.Tensor | None = None,
                answer_as_add_sub_expressions: torch.Tensor | None = None,
                answer_as_counts: torch.Tensor | None = None, metadata: list[dict] | None = None,
                **_: Any) -> dict[str, Any]:
        question_mask, passage_mask = get_text_field_mask(question), get_text_field_mask(passage)
        encoded_question = self.encode_text(question, question_mask)
        encoded_passage = self.encode_text(passage, passage_mask)
        attention, merged = self.merge_passage(encoded_question, encoded_passage, question_mask, passage_mask)
        modeled = self.model_passage(merged, passage_mask, 4)
        passage_weights = masked_softmax(self.passage_weights_predictor(modeled[0]).squeeze(-1), passage_mask)
        passage_vector = weighted_sum(modeled[0], passage_weights)
        question_weights = masked_softmax(self.question_weights_predictor(encoded_question).squeeze(-1), question_mask)
        question_vector = weighted_sum(encoded_question, question_weights)
        ability_log_probs = None
        if len(self.answering_abilities) > 1:
            ability_log_probs = torch.log_softmax(
                self.answer_ability_predictor(torch.cat([passage_vector, question_vector], -1)), -1)
        heads = {name: getattr(self, f"_{name}")(modeled, passage_vector, encoded_question, passage_mask,
                                                  question_mask, number_indices)
                 for name in self.answering_abilities}
        output: dict[str, Any] = {}
        golds = {"passage_span_extraction": answer_as_passage_spans,
                 "question_span_extraction": answer_as_question_spans,
                 "addition_subtraction": answer_as_add_sub_expressions, "counting": answer_as_counts}
        if any(gold is not None for gold in golds.values()):
            marginals = [heads[name]["marginal"](golds[name]) for name in self.answering_abilities]
            if ability_log_probs is not None:
                marginal = logsumexp(torch.stack(marginals, -1) + ability_log_probs)
            else:
                marginal = marginals[0]
            output["loss"] = -marginal.mean()
        if metadata is not None:
            chosen = (ability_log_probs.argmax(-1).tolist() if ability_log_probs is not None
                      else [0] * len(metadata))
            best = {name: head["best"].tolist() for name, head in heads.items()}
            output["question_id"], output["answer"] = [], []
            for index, item in enumerate(metadata):
                ability = self.answering_abilities[chosen[index]]
                answer, predicted = answer_json(ability, best[ability][index], item)
                output["question_id"].append(item["question_id"])
                output["answer"].append(answer)
                if item.get("answer_annotations"):
                    self.drop_metrics(predicted, item["answer_annotations"])
            output["passage_question_attention"] = attention
            output["question_tokens"] = [item["question_tokens"] for item in metadata]
            output["passage_tokens"] = [item["passage_tokens"] for item in metadata]
        return output

    # ------------------------------------------------------------------------------------------ the heads
    # each: {"best": the best answer of its kind, per question; "marginal": gold -> the log-likelihood of the gold}
    def _passage_span_extraction(self, modeled: list[torch.Tensor], passage_vector: torch.Tensor,
                                 encoded_question: torch.Tensor, passage_mask: torch.Tensor, question_mask: torch.Tensor,
                                 number_indices: torch.Tensor) -> dict[str, Any]:
        start = self.passage_span_start_predictor(torch.cat([modeled[0], modeled[1]], -1)).squeeze(-1)
        end = self.passage_span_end_predictor(torch.cat([modeled[0], modeled[2]], -1)).squeeze(-1)
        return _span_head(start, end, passage_mask)

    def _question_span_extraction(self, modeled: list[torch.Tensor], passage_vector: torch.Tensor,
                                  encoded_question: torch.Tensor, passage_mask: torch.Tensor,
                                  question_mask: torch.Tensor, number_indices: torch.Tensor) -> dict[str, Any]:
        beside = torch.cat([encoded_question, passage_vector.unsqueeze(1).expand(-1, encoded_question.size(1), -1)],
                           -1)
        start = self.question_span_start_predictor(beside).squeeze(-1)
        end = self.question_span_end_predictor(beside).squeeze(-1)
        return _span_head(start, end, question_mask)

    def _addition_subtraction(self, modeled: list[torch.Tensor], passage_vector: torch.Tensor,
                              encoded_question: torch.Tensor, passage_mask: torch.Tensor, question_mask: torch.Tensor,
                              number_indices: torch.Tensor) -> dict[str, Any]:
        if number_indices.dim() == 3:  # AllenNLP's index fields: (batch, numbers, 1)
            number_indices = number_indices.squeeze(-1)
        number_mask = number_indices != -1
        for_numbers = torch.cat([modeled[0], modeled[3]], -1)
        gathered = torch.gather(for_numbers, 1, number_indices.clamp(min=0).unsqueeze(-1).expand(
            -1, -1, for_numbers.size(-1)))
        numbers = torch.cat([gathered, passage_vector.unsqueeze(1).expand(-1, gathered.size(1), -1)], -1)
        sign_log_probs = torch.log_softmax(self.number_sign_predictor(numbers), -1)
        best_signs = sign_log_probs.argmax(-1).masked_fill(~number_mask, 0)

        def marginal(signs: torch.Tensor) -> torch.Tensor:
            """``signs``: (batch, combinations, numbers); an all-0 combination is padding."""
            given = signs.sum(-1) > 0
            per_number = torch.gather(sign_log_probs, 2, signs.transpose(1, 2))
            per_number = per_number.masked_fill(~number_mask.unsqueeze(-1), 0.0)
            return logsumexp(_lowest(per_number.sum(1), given))

        return {"best": best_signs, "marginal": marginal}

    def _counting(self, modeled: list[torch.Tensor], passage_vector: torch.Tensor, encoded_question: torch.Tensor,
                  passage_mask: torch.Tensor, question_mask: torch.Tensor,
                  number_indices: torch.Tensor) -> dict[str, Any]:
        count_log_probs = torch.log_softmax(self.count_number_predictor(passage_vector), -1)

        def marginal(counts: torch.Tensor) -> torch.Tensor:
            """``counts``: (batch, answers), -1 for padding."""
            given = counts != -1
            return logsumexp(_lowest(torch.gather(count_log_probs, 1, counts.clamp(min=0)), given))

        return {"best": count_log_probs.argmax(-1), "marginal": marginal}

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return self.drop_metrics.get_metric(reset)  # "em" and "f1", AllenNLP's names

    def make_output_human_readable(self, output: dict[str, Any]) -> dict[str, Any]:
        return dict(output)


def _span_head(start: torch.Tensor, end: torch.Tensor, mask: torch.Tensor) -> dict[str, Any]:
    """A span head's best span (the masked scores' best with start <= end) and its marginal over gold spans."""
    start_log_probs, end_log_probs = masked_log_softmax(start, mask), masked_log_softmax(end, mask)
    best = get_best_span(_lowest(start, mask), _lowest(end, mask))

    def marginal(spans: torch.Tensor) -> torch.Tensor:
        """``spans``: (batch, answers, 2) inclusive, -1 for padding."""
        given = spans[:, :, 0] != -1
        clamped = spans.clamp(min=0)
        likelihood = (torch.gather(start_log_probs, 1, clamped[:, :, 0])
                      + torch.gather(end_log_probs, 1, clamped[:, :, 1]))
        return logsumexp(_lowest(likelihood, given))

    return {"best": best, "marginal": marginal}


SIGNS = {0: 0, 1: 1, 2: -1}  # the sign head's classes: left out, plus, minus


def answer_json(ability: str, best: Any, item: dict) -> tuple[dict[str, Any], str]:
    """AllenNLP's answer of one question (its ``answer_type`` and what the ability predicts), and the answer as the
    DROP metric reads it."""
    if ability in ("passage_span_extraction", "question_span_extraction"):
        kind, text, offsets = (("passage_span", item["original_passage"], item["passage_token_offsets"])
                               if ability == "passage_span_extraction"
                               else ("question_span", item["original_question"], item["question_token_offsets"]))
        start, end = offsets[best[0]][0], offsets[best[1]][1]
        return {"answer_type": kind, "value": text[start:end], "spans": [(start, end)]}, text[start:end]
    if ability == "addition_subtraction":
        signs = [SIGNS[label] for label in best]
        numbers, indices = item["original_numbers"], item["number_indices"]
        offsets = item["passage_token_offsets"]
        result = sum(sign * number for sign, number in zip(signs, numbers))
        terms = [{"span": offsets[index], "value": number, "sign": sign}
                 for index, number, sign in zip(indices, numbers, signs)]
        if indices[-1] == -1:
            terms.pop()  # the 0 the reader adds to every passage
        return {"answer_type": "arithmetic", "numbers": terms, "value": result}, str(result)
    return {"answer_type": "count", "count": int(best)}, str(int(best))
