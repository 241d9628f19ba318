"""What QANet (``qanet``) and NAQANet (``naqanet``) share: their layers up to the modeled passage, held by the
model itself under AllenNLP's names (so both kinds of archive load), and the three steps that use them.

Embed a text, project it to the phrase layer's width, pass it through highway layers and encode it
(:meth:`QaNetLayers.encode_text`); attend passage to question and, through the question, passage to passage ("attention
over attention"), and merge these into the passage (:meth:`QaNetLayers.merge_passage`); project that to the modeling
layer's width and run the one modeling layer several times over, its weights shared (:meth:`QaNetLayers.model_passage`).
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.errors import Problem
from distrain.modules.highway import Highway
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors


class QaNetLayers:
    """A mixin for a :class:`~distrain.models.model.Model`: :meth:`build_qanet_layers` in its constructor, after
    ``Model.__init__``. The encoders state their widths (AllenNLP's configs do); the layers project between them,
    so only the matrix attention's widths must equal the phrase layer's output (checked before data is read)."""

    def build_qanet_layers(self, text_field_embedder: TextFieldEmbedder, num_highway_layers: int,
                           phrase_layer: Seq2SeqEncoder, matrix_attention_layer: MatrixAttention,
                           modeling_layer: Seq2SeqEncoder, dropout_prob: float) -> None:
        encoding_in, encoding_out = phrase_layer.get_input_dim(), phrase_layer.get_output_dim()
        self.text_field_embedder = text_field_embedder
        self.embedding_proj_layer = torch.nn.Linear(text_field_embedder.get_output_dim(), encoding_in)
        self.highway_layer = Highway(encoding_in, num_highway_layers)
        self.encoding_proj_layer = torch.nn.Linear(encoding_in, encoding_in, bias=False)
        self.phrase_layer = phrase_layer
        self.matrix_attention = matrix_attention_layer
        self.modeling_proj_layer = torch.nn.Linear(encoding_out * 4, modeling_layer.get_input_dim(), bias=False)
        self.modeling_layer = modeling_layer
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

    def encode_text(self, text: TextFieldTensors, mask: torch.Tensor) -> torch.Tensor:
        embedded = self.highway_layer(self.embedding_proj_layer(self.dropout(self.text_field_embedder(text))))
        return self.dropout(self.phrase_layer(self.encoding_proj_layer(embedded), mask))

    def merge_passage(self, encoded_question: torch.Tensor, encoded_passage: torch.Tensor, question_mask: torch.Tensor,
              passage_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The passage-to-question attention and the merged passage, ``4 × encoding`` wide."""
        similarity = self.matrix_attention(encoded_passage, encoded_question)
        passage_question = masked_softmax(similarity, question_mask, memory_efficient=True)
        question_passage = masked_softmax(similarity.transpose(1, 2), passage_mask, memory_efficient=True)
        # each passage word reads the passage through the question words it attends to
        passage_passage = torch.bmm(passage_question, question_passage)
        attended_question = weighted_sum(encoded_question, passage_question)
        merged = self.dropout(torch.cat([encoded_passage, attended_question, encoded_passage * attended_question,
                                         encoded_passage * weighted_sum(encoded_passage, passage_passage)], -1))
        return passage_question, merged

    def model_passage(self, merged: torch.Tensor, passage_mask: torch.Tensor, runs: int) -> list[torch.Tensor]:
        """The modeling layer's output after each of ``runs`` runs, each reading the one before."""
        modeled = [self.modeling_proj_layer(merged)]
        for _ in range(runs):
            modeled.append(self.dropout(self.modeling_layer(modeled[-1], passage_mask)))
        return modeled[1:]
