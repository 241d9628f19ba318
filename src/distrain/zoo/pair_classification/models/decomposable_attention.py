"""Parikh et al.'s decomposable attention (AllenNLP's ``decomposable_attention``): align each word of one text with
a soft mix of the other's words, compare each word with what it aligned to, sum the comparisons and classify.

Words are aligned through ``attend_feedforward`` and ``matrix_attention``, compared by ``compare_feedforward``
(on the word beside its aligned mix) and classified by ``aggregate_feedforward`` from both texts' sums, which is
why the last one's width must be the number of labels. The optional encoders run first (the hypothesis uses the
premise's when it has none of its own), as in AllenNLP.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.models.model import Model
from distrain.zoo.pair_classification.models.outputs import PairClassifierOutputs
from distrain.modules.feedforward import FeedForward
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.matrix_attention import MatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.time_distributed import TimeDistributed


@Model.register("decomposable_attention")
class DecomposableAttention(PairClassifierOutputs, Model):
    """embed → (encode) → attend → compare → sum over words → aggregate into label logits."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, attend_feedforward: Lazy[FeedForward],
                 matrix_attention: MatrixAttention, compare_feedforward: Lazy[FeedForward],
                 aggregate_feedforward: Lazy[FeedForward], premise_encoder: Lazy[Seq2SeqEncoder] | None = None,
                 hypothesis_encoder: Lazy[Seq2SeqEncoder] | None = None) -> None:
        super().__init__(vocab, self.default_metrics())
        self.use_label_names(self.label_namespace)
        self.text_field_embedder = text_field_embedder
        width = text_field_embedder.get_output_dim()
        self.premise_encoder = premise_encoder.construct(input_dim=width) if premise_encoder else None
        # without its own, the hypothesis shares the premise's encoder (saved under both names, as AllenNLP does)
        self.hypothesis_encoder = hypothesis_encoder.construct(input_dim=width) if hypothesis_encoder \
            else self.premise_encoder
        encoded = self.premise_encoder.get_output_dim() if self.premise_encoder else width
        self.attend_feedforward = TimeDistributed(attend_feedforward.construct(input_dim=encoded))
        self.matrix_attention = matrix_attention
        compare = compare_feedforward.construct(input_dim=2 * encoded)
        self.compare_feedforward = TimeDistributed(compare)
        self.aggregate_feedforward = aggregate_feedforward.construct(input_dim=2 * compare.get_output_dim())
        labels = vocab.size(self.label_namespace)
        if self.aggregate_feedforward.get_output_dim() != labels:
            raise ValueError(f"aggregate_feedforward gives {self.aggregate_feedforward.get_output_dim()} values, "
                             f"but there are {labels} labels")

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The stated widths along the chain: encoders read the embedding, the attend feedforward their output
        (or the embedding), compare twice that, aggregate twice compare's output."""
        width = output_dim(arguments["text_field_embedder"])
        source = "the text_field_embedder"
        problems, encoded = chain_problems([("premise_encoder", arguments.get("premise_encoder"))], width, source)
        problems += chain_problems([("hypothesis_encoder", arguments.get("hypothesis_encoder"))], width, source)[0]
        problems += chain_problems([("attend_feedforward", arguments["attend_feedforward"])], encoded,
                                   "the encoder (or embedder)")[0]
        doubled = 2 * encoded if encoded else None
        more, compared = chain_problems([("compare_feedforward", arguments["compare_feedforward"])], doubled,
                                        "the encoded word beside its aligned mix (twice the encoder's width)")
        problems += more
        problems += chain_problems([("aggregate_feedforward", arguments["aggregate_feedforward"])],
                                   2 * compared if compared else None,
                                   "both texts' summed comparisons (twice compare_feedforward's width)")[0]
        return problems

    def forward(self, premise: TextFieldTensors, hypothesis: TextFieldTensors, label: torch.Tensor | None = None,
                metadata: list | None = None, **_: Any) -> dict[str, Any]:
        premise_mask, hypothesis_mask = get_text_field_mask(premise), get_text_field_mask(hypothesis)
        embedded_premise = self.text_field_embedder(premise)
        embedded_hypothesis = self.text_field_embedder(hypothesis)
        if self.premise_encoder is not None:
            embedded_premise = self.premise_encoder(embedded_premise, premise_mask)
        if self.hypothesis_encoder is not None:
            embedded_hypothesis = self.hypothesis_encoder(embedded_hypothesis, hypothesis_mask)

        similarity = self.matrix_attention(self.attend_feedforward(embedded_premise),
                                           self.attend_feedforward(embedded_hypothesis))
        p2h_attention = masked_softmax(similarity, hypothesis_mask)
        h2p_attention = masked_softmax(similarity.transpose(1, 2).contiguous(), premise_mask)
        attended_hypothesis = weighted_sum(embedded_hypothesis, p2h_attention)
        attended_premise = weighted_sum(embedded_premise, h2p_attention)

        compared_premise = self._compared(embedded_premise, attended_hypothesis, premise_mask)
        compared_hypothesis = self._compared(embedded_hypothesis, attended_premise, hypothesis_mask)
        logits = self.aggregate_feedforward(torch.cat([compared_premise, compared_hypothesis], dim=-1))
        output = self.label_outputs(logits, label)
        output.update({"h2p_attention": h2p_attention, "p2h_attention": p2h_attention})
        if metadata is not None and all("premise_tokens" in item for item in metadata):  # AllenNLP's, for predictors
            output["premise_tokens"] = [item["premise_tokens"] for item in metadata]
            output["hypothesis_tokens"] = [item["hypothesis_tokens"] for item in metadata]
        return output

    def _compared(self, words: torch.Tensor, aligned: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Each word compared with its aligned mix, summed over the unpadded words."""
        compared = self.compare_feedforward(torch.cat([words, aligned], dim=-1))
        return (compared * mask.unsqueeze(-1)).sum(dim=1)
