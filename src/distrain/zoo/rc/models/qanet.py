"""QANet (Yu et al., 2018; AllenNLP's ``qanet``): BiDAF's question answering with the recurrent layers replaced by
convolutions and self attention (:mod:`distrain.zoo.rc.modules.qanet_encoder`).

Embed both texts, project them to the phrase layer's width, pass them through highway layers and encode each;
attend passage to question and, through the question, passage to passage ("attention over attention"), merge
these into the passage, project that to the modeling layer's width and run the one modeling layer three times
(its weights shared). Span starts are scored from the first and second runs, ends from the first and third; the
answer is the best span with start <= end.

The loss is the mean over questions of the start and end cross-entropies (AllenNLP's), so a global batch split
among workers gives the one-process gradient. Metrics are AllenNLP's names: ``start_acc``, ``end_acc``,
``span_acc`` and SQuAD's ``em`` and ``f1`` (summed per question, so they sync exactly).
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import NonNegativeInt, Probability
from distrain.config.errors import Problem
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.rc.models.span_answers import PassageSpanModel, span_metrics
from distrain.zoo.rc.modules.best_span import get_best_span
from distrain.modules.highway import Highway
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors


@Model.register("qanet")
@Model.register("rc-qanet")
class QaNet(PassageSpanModel):
    """The encoders state their widths (AllenNLP's config does); the model projects between them, so only the
    matrix attention's widths must equal the phrase layer's output (checked before data is read)."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, num_highway_layers: NonNegativeInt,
                 phrase_layer: Seq2SeqEncoder, matrix_attention_layer: MatrixAttention,
                 modeling_layer: Seq2SeqEncoder, dropout_prob: Probability = 0.1) -> None:
        super().__init__(vocab, span_metrics())
        encoding_in, encoding_out = phrase_layer.get_input_dim(), phrase_layer.get_output_dim()
        modeling_in, modeling_out = modeling_layer.get_input_dim(), modeling_layer.get_output_dim()
        self.text_field_embedder = text_field_embedder
        self.embedding_proj_layer = torch.nn.Linear(text_field_embedder.get_output_dim(), encoding_in)
        self.highway_layer = Highway(encoding_in, num_highway_layers)
        self.encoding_proj_layer = torch.nn.Linear(encoding_in, encoding_in, bias=False)
        self.phrase_layer = phrase_layer
        self.matrix_attention = matrix_attention_layer
        self.modeling_proj_layer = torch.nn.Linear(encoding_out * 4, modeling_in, bias=False)
        self.modeling_layer = modeling_layer
        self.span_start_predictor = torch.nn.Linear(modeling_out * 2, 1)
        self.span_end_predictor = torch.nn.Linear(modeling_out * 2, 1)
        self.dropout = torch.nn.Dropout(dropout_prob) if dropout_prob > 0 else torch.nn.Identity()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The matrix attention's stated widths against the phrase layer's output."""
        encoding = output_dim(arguments.get("phrase_layer"))
        attention = getattr(arguments.get("matrix_attention_layer"), "argument", None)
        if encoding is None or attention is None:
            return []
        problems = []
        for key in ("tensor_1_dim", "tensor_2_dim"):
            try:
                stated = attention(key)
            except (KeyError, AttributeError):
                continue
            if stated is not None and stated != encoding:
                problems.append(Problem(f"matrix_attention_layer.{key}",
                                        f"is {stated}, but the phrase_layer gives {encoding}"))
        return problems

    def _span_scores(self, encoded_question: torch.Tensor, encoded_passage: torch.Tensor, question_mask: torch.Tensor,
                     passage_mask: torch.Tensor) -> dict[str, Any]:
        similarity = self.matrix_attention(encoded_passage, encoded_question)
        passage_question = masked_softmax(similarity, question_mask, memory_efficient=True)
        question_passage = masked_softmax(similarity.transpose(1, 2), passage_mask, memory_efficient=True)
        # each passage word reads the passage through the question words it attends to
        passage_passage = torch.bmm(passage_question, question_passage)
        attended_question = weighted_sum(encoded_question, passage_question)
        merged = self.dropout(torch.cat([encoded_passage, attended_question, encoded_passage * attended_question,
                                         encoded_passage * weighted_sum(encoded_passage, passage_passage)], -1))
        modeled = [self.modeling_proj_layer(merged)]
        for _ in range(3):
            modeled.append(self.dropout(self.modeling_layer(modeled[-1], passage_mask)))
        lowest = torch.finfo(merged.dtype).min  # AllenNLP's mask value: padding never wins a max
        start_logits = self.span_start_predictor(torch.cat([modeled[1], modeled[2]], -1)).squeeze(-1)
        end_logits = self.span_end_predictor(torch.cat([modeled[1], modeled[3]], -1)).squeeze(-1)
        start_logits = start_logits.masked_fill(~passage_mask, lowest)
        end_logits = end_logits.masked_fill(~passage_mask, lowest)
        best_span = get_best_span(start_logits, end_logits)
        output: dict[str, Any] = {"passage_question_attention": passage_question,
                                  "span_start_logits": start_logits, "span_start_probs": torch.softmax(start_logits, -1),
                                  "span_end_logits": end_logits, "span_end_probs": torch.softmax(end_logits, -1),
                                  "best_span": best_span}
        return output

    def _encode(self, text: TextFieldTensors, mask: torch.Tensor) -> torch.Tensor:
        embedded = self.highway_layer(self.embedding_proj_layer(self.dropout(self.text_field_embedder(text))))
        return self.dropout(self.phrase_layer(self.encoding_proj_layer(embedded), mask))
