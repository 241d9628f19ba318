"""QANet (Yu et al., 2018; AllenNLP's ``qanet``): BiDAF's question answering with the recurrent layers replaced by
convolutions and self attention (:mod:`distrain.zoo.rc.modules.qanet_encoder`); its layers up to the modeled passage
are NAQANet's too (:mod:`distrain.zoo.rc.modules.qanet_layers`).

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

from typing import Any

import torch

from distrain.config.constraints import NonNegativeInt, Probability
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors
from distrain.zoo.rc.models.span_answers import PassageSpanModel, span_metrics
from distrain.zoo.rc.modules.best_span import get_best_span
from distrain.zoo.rc.modules.qanet_layers import QaNetLayers


@Model.register("qanet")
@Model.register("rc-qanet")
class QaNet(QaNetLayers, PassageSpanModel):
    """QANet's layers (:class:`~distrain.zoo.rc.modules.qanet_layers.QaNetLayers`, which checks the widths) and
    its span scores."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, num_highway_layers: NonNegativeInt,
                 phrase_layer: Seq2SeqEncoder, matrix_attention_layer: MatrixAttention,
                 modeling_layer: Seq2SeqEncoder, dropout_prob: Probability = 0.1) -> None:
        super().__init__(vocab, span_metrics())
        self.build_qanet_layers(text_field_embedder, num_highway_layers, phrase_layer, matrix_attention_layer,
                                modeling_layer, dropout_prob)
        modeling_out = modeling_layer.get_output_dim()
        self.span_start_predictor = torch.nn.Linear(modeling_out * 2, 1)
        self.span_end_predictor = torch.nn.Linear(modeling_out * 2, 1)

    def _span_scores(self, encoded_question: torch.Tensor, encoded_passage: torch.Tensor, question_mask: torch.Tensor,
                     passage_mask: torch.Tensor) -> dict[str, Any]:
        passage_question, merged = self.merge_passage(encoded_question, encoded_passage, question_mask, passage_mask)
        modeled = self.model_passage(merged, passage_mask, 3)
        lowest = torch.finfo(merged.dtype).min  # AllenNLP's mask value: padding never wins a max
        start_logits = self.span_start_predictor(torch.cat([modeled[0], modeled[1]], -1)).squeeze(-1)
        end_logits = self.span_end_predictor(torch.cat([modeled[0], modeled[2]], -1)).squeeze(-1)
        start_logits = start_logits.masked_fill(~passage_mask, lowest)
        end_logits = end_logits.masked_fill(~passage_mask, lowest)
        best_span = get_best_span(start_logits, end_logits)
        output: dict[str, Any] = {"passage_question_attention": passage_question,
                                  "span_start_logits": start_logits, "span_start_probs": torch.softmax(start_logits, -1),
                                  "span_end_logits": end_logits, "span_end_probs": torch.softmax(end_logits, -1),
                                  "best_span": best_span}
        return output

    def _encode(self, text: TextFieldTensors, mask: torch.Tensor) -> torch.Tensor:
        return self.encode_text(text, mask)
