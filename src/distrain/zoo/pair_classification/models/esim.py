"""Chen et al.'s Enhanced LSTM for natural language inference (AllenNLP's ``esim``): encode both texts, align each
encoded word with a soft mix of the other text's, enhance it with their difference and product, project, encode
again, pool (mean and max over the unpadded words) and classify.

``dropout`` is AllenNLP's: one mask per sequence on each LSTM's input (variational) and plain dropout on the pooled
vector. The widths AllenNLP checks (encoder input = embedding, projection input = 4 × encoder output, inference
encoder input = projection output) are checked before data is read, with the rest of the chain.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.pair_classification.models.outputs import PairClassifierOutputs, masked_max, masked_mean
from distrain.modules.augmented_lstm import variational_dropout
from distrain.modules.feedforward import FeedForward
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask


@Model.register("esim")
class Esim(PairClassifierOutputs, Model):
    """embed → encode → align → enhance → project → encode → mean and max pool → feedforward → label logits."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Lazy[Seq2SeqEncoder],
                 matrix_attention: MatrixAttention, projection_feedforward: Lazy[FeedForward],
                 inference_encoder: Lazy[Seq2SeqEncoder], output_feedforward: Lazy[FeedForward],
                 output_logit: Lazy[FeedForward], dropout: Probability = 0.5) -> None:
        super().__init__(vocab, self.default_metrics())
        self.use_label_names(self.label_namespace)
        self.text_field_embedder = text_field_embedder
        self.encoder = encoder.construct(input_dim=text_field_embedder.get_output_dim())
        self.matrix_attention = matrix_attention
        self.projection_feedforward = projection_feedforward.construct(input_dim=4 * self.encoder.get_output_dim())
        self.inference_encoder = inference_encoder.construct(input_dim=self.projection_feedforward.get_output_dim())
        self.output_feedforward = output_feedforward.construct(input_dim=4 * self.inference_encoder.get_output_dim())
        self.output_logit = output_logit.construct(input_dim=self.output_feedforward.get_output_dim())
        self.dropout_probability = dropout
        self.dropout = torch.nn.Dropout(dropout) if dropout else torch.nn.Identity()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """Each stated width is what the stage before gives (the enhanced and pooled vectors are 4 × wide)."""
        problems, width = chain_problems([("encoder", arguments["encoder"])],
                                         output_dim(arguments["text_field_embedder"]), "the text_field_embedder")
        for stage, source, factor in (
                ("projection_feedforward", "the enhanced words (4 × the encoder's width)", 4),
                ("inference_encoder", "projection_feedforward", 1),
                ("output_feedforward", "the pooled texts (4 × the inference encoder's width)", 4),
                ("output_logit", "output_feedforward", 1)):
            more, width = chain_problems([(stage, arguments[stage])], factor * width if width else None, source)
            problems += more
        return problems

    def forward(self, premise: TextFieldTensors, hypothesis: TextFieldTensors, label: torch.Tensor | None = None,
                metadata: list | None = None, **_: Any) -> dict[str, Any]:
        premise_mask, hypothesis_mask = get_text_field_mask(premise), get_text_field_mask(hypothesis)
        encoded_premise = self.encoder(self._rnn_input(self.text_field_embedder(premise)), premise_mask)
        encoded_hypothesis = self.encoder(self._rnn_input(self.text_field_embedder(hypothesis)), hypothesis_mask)

        similarity = self.matrix_attention(encoded_premise, encoded_hypothesis)
        attended_hypothesis = weighted_sum(encoded_hypothesis, masked_softmax(similarity, hypothesis_mask))
        h2p_attention = masked_softmax(similarity.transpose(1, 2).contiguous(), premise_mask)
        attended_premise = weighted_sum(encoded_premise, h2p_attention)

        inferred_premise = self._inferred(encoded_premise, attended_hypothesis, premise_mask)
        inferred_hypothesis = self._inferred(encoded_hypothesis, attended_premise, hypothesis_mask)
        pooled = torch.cat([masked_mean(inferred_premise, premise_mask), masked_max(inferred_premise, premise_mask),
                            masked_mean(inferred_hypothesis, hypothesis_mask),
                            masked_max(inferred_hypothesis, hypothesis_mask)], dim=1)
        logits = self.output_logit(self.output_feedforward(self.dropout(pooled)))
        return self.label_outputs(logits, label)

    def _rnn_input(self, sequence: torch.Tensor) -> torch.Tensor:
        return variational_dropout(sequence, self.dropout_probability, self.training)

    def _inferred(self, encoded: torch.Tensor, aligned: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The words enhanced with what they aligned to (difference, product), projected and encoded again."""
        enhanced = torch.cat([encoded, aligned, encoded - aligned, encoded * aligned], dim=-1)
        return self.inference_encoder(self._rnn_input(self.projection_feedforward(enhanced)), mask)
