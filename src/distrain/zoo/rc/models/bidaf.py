"""Bidirectional Attention Flow (Seo et al., 2017; AllenNLP's ``bidaf``): answer a question with a span of the
passage, read from the ``squad`` reader's instances.

Embed both texts and pass them through highway layers, encode each with the phrase layer, compare every passage
word with every question word (``matrix_attention``), merge passage-to-question and question-to-passage attention
into the passage, model that, and score span starts; the span end encoder reads the start distribution before
the ends are scored. The answer is the best span with start <= end (:func:`~distrain.zoo.rc.modules.best_span.get_best_span`).

The loss is the mean over questions of the start and end cross-entropies (AllenNLP's), so a global batch split
among workers gives the one-process gradient. Metrics are AllenNLP's names: ``start_acc``, ``end_acc``,
``span_acc`` and SQuAD's ``em`` and ``f1`` (summed per question, so they sync exactly).
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import NonNegativeInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.rc.models.span_answers import PassageSpanModel, span_metrics
from distrain.zoo.rc.modules.best_span import get_best_span
from distrain.modules.highway import Highway
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import input_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors


@Model.register("bidaf")
class BidirectionalAttentionFlow(PassageSpanModel):
    """The encoders' input widths follow from the embedder and the phrase layer (stated ones are checked before
    data is read): phrase layer = embedder, modeling layer = 4 × phrase, span end encoder = 4 × phrase + 3 ×
    modeling. ``mask_lstms: false`` runs the encoders over padding too (AllenNLP's speed option)."""

    outputs_token_offsets = True

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, num_highway_layers: NonNegativeInt,
                 phrase_layer: Lazy[Seq2SeqEncoder], matrix_attention: MatrixAttention,
                 modeling_layer: Lazy[Seq2SeqEncoder], span_end_encoder: Lazy[Seq2SeqEncoder],
                 dropout: Probability = 0.2, mask_lstms: bool = True) -> None:
        super().__init__(vocab, span_metrics())
        self.text_field_embedder = text_field_embedder
        width = text_field_embedder.get_output_dim()
        self.highway_layer = Highway(width, num_highway_layers)
        self.phrase_layer = phrase_layer.construct(input_dim=width)
        encoding = self.phrase_layer.get_output_dim()
        self.matrix_attention = matrix_attention
        self.modeling_layer = modeling_layer.construct(input_dim=4 * encoding)
        modeling = self.modeling_layer.get_output_dim()
        self.span_end_encoder = span_end_encoder.construct(input_dim=4 * encoding + 3 * modeling)
        self.span_start_predictor = torch.nn.Linear(4 * encoding + modeling, 1)
        self.span_end_predictor = torch.nn.Linear(4 * encoding + self.span_end_encoder.get_output_dim(), 1)
        self.dropout = torch.nn.Dropout(dropout) if dropout > 0 else torch.nn.Identity()
        self.mask_lstms = mask_lstms

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Each encoder's stated input width against what the one before gives (AllenNLP's dimension checks)."""
        width = output_dim(arguments.get("text_field_embedder"))
        phrase = arguments.get("phrase_layer")
        problems = input_problems(phrase, width, "phrase_layer", "the text_field_embedder")
        encoding = output_dim(phrase, width)
        if encoding is None:
            return problems
        attention = arguments.get("matrix_attention")
        for key in ("tensor_1_dim", "tensor_2_dim"):
            stated = _stated(attention, key)
            if stated is not None and stated != encoding:
                problems.append(Problem(f"matrix_attention.{key}", f"is {stated}, but the phrase_layer gives "
                                                                   f"{encoding}"))
        modeling_recipe = arguments.get("modeling_layer")
        problems += input_problems(modeling_recipe, 4 * encoding, "modeling_layer", "4 × the phrase_layer")
        modeling = output_dim(modeling_recipe, 4 * encoding)
        if modeling is not None:
            problems += input_problems(arguments.get("span_end_encoder"), 4 * encoding + 3 * modeling,
                                       "span_end_encoder", "4 × the phrase_layer + 3 × the modeling_layer")
        return problems

    def _span_scores(self, encoded_question: torch.Tensor, encoded_passage: torch.Tensor, question_mask: torch.Tensor,
                     passage_mask: torch.Tensor) -> dict[str, Any]:
        merged, passage_question_attention = bidaf_attention(self.matrix_attention, encoded_passage,
                                                             encoded_question, passage_mask, question_mask)
        modeled = self.dropout(self.modeling_layer(merged, self._lstm_mask(passage_mask)))
        start_logits = self.span_start_predictor(self.dropout(torch.cat([merged, modeled], -1))).squeeze(-1)
        start_probs = masked_softmax(start_logits, passage_mask)
        # the end encoder sees where the start is likely: the start-weighted modeled passage, at every position
        start_summary = weighted_sum(modeled, start_probs).unsqueeze(1).expand_as(modeled)
        end_input = torch.cat([merged, modeled, start_summary, modeled * start_summary], -1)
        end_encoded = self.dropout(self.span_end_encoder(end_input, self._lstm_mask(passage_mask)))
        end_logits = self.span_end_predictor(self.dropout(torch.cat([merged, end_encoded], -1))).squeeze(-1)
        end_probs = masked_softmax(end_logits, passage_mask)
        lowest = torch.finfo(start_logits.dtype).min  # AllenNLP's mask value: padding never wins a max
        start_logits = start_logits.masked_fill(~passage_mask, lowest)
        end_logits = end_logits.masked_fill(~passage_mask, lowest)
        best_span = get_best_span(start_logits, end_logits)
        output: dict[str, Any] = {"passage_question_attention": passage_question_attention,
                                  "span_start_logits": start_logits, "span_start_probs": start_probs,
                                  "span_end_logits": end_logits, "span_end_probs": end_probs, "best_span": best_span}
        return output

    def _encode(self, text: TextFieldTensors, mask: torch.Tensor) -> torch.Tensor:
        embedded = self.highway_layer(self.text_field_embedder(text))
        return self.dropout(self.phrase_layer(embedded, self._lstm_mask(mask)))

    def _lstm_mask(self, mask: torch.Tensor) -> torch.Tensor:
        return mask if self.mask_lstms else torch.ones_like(mask)


def bidaf_attention(matrix_attention: MatrixAttention, passage: torch.Tensor, question: torch.Tensor,
                    passage_mask: torch.Tensor, question_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """BiDAF's merge: each passage word with the question words it attends to, and the passage words most like any
    question word (one summary for the whole passage): ``(batch, passage, 4 × encoding)``; and the passage's
    attention over the question, ``(batch, passage, question)``."""
    similarity = matrix_attention(passage, question)
    attention = masked_softmax(similarity, question_mask)
    passage_question = weighted_sum(question, attention)
    lowest = torch.finfo(similarity.dtype).min
    best_match = similarity.masked_fill(~question_mask.unsqueeze(1), lowest).max(-1).values
    question_passage = weighted_sum(passage, masked_softmax(best_match, passage_mask))
    question_passage = question_passage.unsqueeze(1).expand_as(passage)
    merged = torch.cat([passage, passage_question, passage * passage_question, passage * question_passage], -1)
    return merged, attention


def _stated(recipe: Any, key: str) -> int | None:
    """A width ``recipe`` (a configured component) states, if it states one."""
    argument = getattr(recipe, "argument", None)
    if argument is None:
        return None
    try:
        return argument(key)
    except (KeyError, AttributeError):
        return None
