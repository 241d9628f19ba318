"""AllenNLP's ``coref`` (Lee et al. 2017, "End-to-end Neural Coreference Resolution", and with ``coarse_to_fine`` and
``inference_order`` > 1 Lee et al. 2018, "Higher-order Coreference Resolution with Coarse-to-fine Inference"): every
candidate span gets a vector (its contextual end points, its width, an attention-weighted sum of its words), a
mention score prunes them to ``spans_per_word`` per word, and each kept span scores its antecedent candidates (and a
"none" choice at 0); the predicted links make the clusters.

Each document keeps ``floor(spans_per_word x its length)`` spans, and the loss is each document's negative marginal
log-likelihood of its gold antecedents, averaged over the documents. AllenNLP kept ``spans_per_word`` x the batch's
longest document in each, and summed the loss over the batch, padding rows included: its configs take batches of one
document, where the two agree; here a document's result does not depend on the documents batched with it, so each
worker's documents count once however the batch is split. ``coref_precision``/``recall``/``f1`` (the CoNLL-2012
scores, :mod:`distrain.zoo.coref.metrics.conll_coref_scores`) and ``mention_recall`` are kept in training and evaluation, as
AllenNLP kept them.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveFloat, PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.zoo.coref.metrics.conll_coref_scores import ConllCorefScores, predicted_clusters
from distrain.zoo.coref.metrics.mention_recall import MentionRecall
from distrain.zoo.coref.models.antecedents import (coarse_to_fine_pruning, distance_pruning, gold_antecedent_labels,
                                               lowest, masked_topk)
from distrain.models.model import Model
from distrain.modules.feedforward import FeedForward
from distrain.modules.gated_sum import GatedSum
from distrain.modules.masked_softmax import masked_softmax, weighted_sum
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, output_dim
from distrain.modules.span_extractor import batched_index_select, bucket_values
from distrain.modules.span_extractors.endpoint import EndpointSpanExtractor
from distrain.modules.span_extractors.self_attentive import SelfAttentiveSpanExtractor
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask

DISTANCE_BUCKETS = 10
TINY = 1e-13  # AllenNLP's masked_log_softmax adds log(mask + tiny)


def logsumexp(tensor: torch.Tensor) -> torch.Tensor:
    """AllenNLP's, over the last dimension: the maximum plus the log of the shifted exponentials' sum."""
    top, _ = tensor.max(-1)
    return top + (tensor - top.unsqueeze(-1)).exp().sum(-1).log()


@Model.register("coref")
class CoreferenceResolver(Model):
    """``text_field_embedder`` (lexical dropout) → ``context_layer``; span vectors → ``mention_feedforward`` → a
    mention score; pairs of kept spans (both vectors, their product, their distance) → ``antecedent_feedforward`` →
    an antecedent score."""

    default_predictor = "coreference_resolution"
    allennlp_names = {
        r"_context_layer\._module": "context_layer.rnn",
        r"_mention_scorer\._module": "mention_scorer",
        r"_antecedent_scorer\._module": "antecedent_scorer",
        r"_endpoint_span_extractor\._span_width_embedding": "endpoint_span_extractor.span_width_embedding",
        "_distance_embedding": "distance_embedding",
        "_coarse2fine_scorer": "coarse2fine_scorer",
        "_span_updating_gated_sum": "span_updating_gated_sum",
    }

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, context_layer: Lazy[Seq2SeqEncoder],
                 mention_feedforward: Lazy[FeedForward], antecedent_feedforward: Lazy[FeedForward],
                 feature_size: PositiveInt, max_span_width: PositiveInt, spans_per_word: PositiveFloat,
                 max_antecedents: PositiveInt, coarse_to_fine: bool = False, inference_order: PositiveInt = 1,
                 lexical_dropout: Probability = 0.2) -> None:
        super().__init__(vocab, {"mention_recall": MentionRecall(), "conll_coref_scores": ConllCorefScores()})
        self.text_field_embedder = text_field_embedder
        embedded = text_field_embedder.get_output_dim()
        self.context_layer = context_layer.construct(input_dim=embedded)
        self.endpoint_span_extractor = EndpointSpanExtractor(self.context_layer.get_output_dim(), "x,y",
                                                             max_span_width, feature_size)
        self.attentive_span_extractor = SelfAttentiveSpanExtractor(embedded)
        span_width = self.endpoint_span_extractor.get_output_dim() + embedded
        self.mention_feedforward = mention_feedforward.construct(input_dim=span_width)
        self.mention_scorer = torch.nn.Linear(self.mention_feedforward.get_output_dim(), 1)
        self.antecedent_feedforward = antecedent_feedforward.construct(input_dim=3 * span_width + feature_size)
        self.antecedent_scorer = torch.nn.Linear(self.antecedent_feedforward.get_output_dim(), 1)
        self.distance_embedding = torch.nn.Embedding(DISTANCE_BUCKETS, feature_size)
        self.spans_per_word, self.max_antecedents = spans_per_word, max_antecedents
        self.coarse_to_fine, self.inference_order = coarse_to_fine, inference_order
        if coarse_to_fine:
            self.coarse2fine_scorer = torch.nn.Linear(span_width, span_width)
        if inference_order > 1:
            self.span_updating_gated_sum = GatedSum(span_width)
        self.lexical_dropout = torch.nn.Dropout(lexical_dropout) if lexical_dropout > 0 else torch.nn.Identity()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The context layer reads the embedder's output; the mention feedforward a span's vector (the context
        layer's width twice, ``feature_size``, the embedder's width); the antecedent feedforward a pair's (three span
        vectors and ``feature_size``)."""
        embedder, feature = arguments.get("text_field_embedder"), arguments.get("feature_size")
        width = output_dim(embedder) if embedder is not None else None
        problems, context = chain_problems([("context_layer", arguments.get("context_layer"))], width,
                                           "the text_field_embedder")
        if problems or context is None or width is None or not isinstance(feature, int):
            return problems
        span = 2 * context + feature + width
        source = "a span's vector (2 x the context_layer's width, feature_size and the text_field_embedder's width)"
        problems += chain_problems([("mention_feedforward", arguments.get("mention_feedforward"))], span, source)[0]
        problems += chain_problems([("antecedent_feedforward", arguments.get("antecedent_feedforward"))],
                                   3 * span + feature, "a pair's vector (3 span vectors and feature_size)")[0]
        return problems

    def forward(self, text: TextFieldTensors, spans: torch.Tensor, span_labels: torch.Tensor | None = None,
                metadata: list[dict] | None = None, **_: Any) -> dict[str, Any]:
        embedded = self.lexical_dropout(self.text_field_embedder(text))
        text_mask = get_text_field_mask(text)
        spans = spans.long()
        span_mask = spans[:, :, 0] >= 0
        spans = spans.clamp(min=0)  # padding spans (-1) point at word 0, as AllenNLP's relu made them
        contextual = self.context_layer(embedded, text_mask)
        span_vectors = torch.cat([self.endpoint_span_extractor(contextual, spans),
                                  self.attentive_span_extractor(embedded, spans)], -1)
        lengths = text_mask.sum(1).double()  # float64, as AllenNLP's Python float product
        kept = torch.minimum((self.spans_per_word * lengths).floor().long(), span_mask.sum(1))
        mention_scores = self.mention_scorer(self.mention_feedforward(span_vectors)).squeeze(-1)
        top_scores, top_mask, top_indices = masked_topk(mention_scores, span_mask, kept)
        kept = top_indices.shape[1]
        top_spans = batched_index_select(spans, top_indices)
        top_vectors = batched_index_select(span_vectors, top_indices)
        most = min(self.max_antecedents, kept)
        if self.coarse_to_fine:
            pruned = coarse_to_fine_pruning(top_vectors, top_scores, top_mask, self.coarse2fine_scorer, most)
        else:
            pruned = distance_pruning(top_scores, most)
        partial, antecedent_mask, offsets, antecedent_indices = pruned
        scores = self.coreference_scores(top_vectors, antecedent_indices, partial, antecedent_mask, offsets)
        for _ in range(self.inference_order - 1):
            with_dummy = torch.cat([antecedent_mask.new_ones(*antecedent_mask.shape[:2], 1), antecedent_mask], -1)
            weights = masked_softmax(scores, with_dummy, memory_efficient=True)
            candidates = torch.cat([top_vectors.unsqueeze(2), batched_index_select(top_vectors, antecedent_indices)], 2)
            top_vectors = self.span_updating_gated_sum(top_vectors, weighted_sum(candidates, weights))
            scores = self.coreference_scores(top_vectors, antecedent_indices, partial, antecedent_mask, offsets)
        predicted = (scores.argmax(2) - 1).masked_fill(~top_mask, -1)  # column 0 is "no antecedent"
        output: dict[str, Any] = {"top_spans": top_spans, "antecedent_indices": antecedent_indices,
                                  "predicted_antecedents": predicted, "coreference_scores": scores,
                                  "top_mask": top_mask}
        if span_labels is not None:
            top_labels = batched_index_select(span_labels.long().unsqueeze(-1), top_indices)
            candidate_labels = batched_index_select(top_labels, antecedent_indices).squeeze(-1)
            candidate_labels = candidate_labels.masked_fill(~antecedent_mask, -100)
            gold = gold_antecedent_labels(top_labels, candidate_labels)
            log_probabilities = torch.log_softmax(scores + (top_mask.unsqueeze(-1).to(scores.dtype) + TINY).log(), -1)
            likelihoods = logsumexp(log_probabilities + gold.log()).masked_fill(~top_mask, 0)
            output["loss"] = -likelihoods.sum(-1).mean()
            kept_spans = top_spans.masked_fill(~top_mask.unsqueeze(-1), -1)  # a shorter document's places past its own
            self.metrics["mention_recall"](kept_spans, metadata)
            self.metrics["conll_coref_scores"](kept_spans, antecedent_indices, predicted, metadata)
        if metadata is not None:
            output["document"] = [item["original_text"] for item in metadata]
        return output

    def coreference_scores(self, top_vectors: torch.Tensor, antecedent_indices: torch.Tensor, partial: torch.Tensor,
                           antecedent_mask: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        """Each kept span's score for "no antecedent" (0) and for each candidate: the pair's feedforward score plus
        ``partial`` (the mention scores), the lowest float where there is no candidate: ``(batch, kept, 1 + most)``."""
        candidates = batched_index_select(top_vectors, antecedent_indices)
        targets = top_vectors.unsqueeze(2).expand_as(candidates)
        distances = self.distance_embedding(bucket_values(offsets, num_total_buckets=DISTANCE_BUCKETS))
        pairs = torch.cat([targets, candidates, candidates * targets, distances], -1)
        scores = self.antecedent_scorer(self.antecedent_feedforward(pairs)).squeeze(-1) + partial
        scores = scores.masked_fill(~antecedent_mask, lowest(scores))
        return torch.cat([scores.new_zeros(*scores.shape[:2], 1), scores], -1)

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """``coref_precision``, ``coref_recall``, ``coref_f1`` and ``mention_recall``, as AllenNLP names them."""
        return {**self.metrics["conll_coref_scores"].get_metric(reset),
                "mention_recall": self.metrics["mention_recall"].get_metric(reset)}

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        """One ``{"document", "clusters", "top_spans", "antecedent_indices", "predicted_antecedents"}`` per document:
        its clusters as lists of inclusive ``[start, end]`` word spans, as AllenNLP's predictor gives. Each document's
        spans and candidates stop at its own count (a batch pads them to its longest document's), so a document gets
        the answer it gets alone."""
        spans, candidates = output["top_spans"].tolist(), output["antecedent_indices"].tolist()
        chosen, counts = output["predicted_antecedents"].tolist(), output["top_mask"].sum(1).tolist()
        items = []
        for row in range(len(spans)):
            kept, width = counts[row], min(self.max_antecedents, counts[row])
            row_candidates = [candidate[:width] for candidate in candidates[row][:kept]]
            clusters = predicted_clusters(spans[row][:kept], row_candidates, chosen[row][:kept])
            item = {"clusters": [[list(mention) for mention in cluster] for cluster in clusters],
                    "top_spans": spans[row][:kept], "antecedent_indices": row_candidates,
                    "predicted_antecedents": chosen[row][:kept]}
            if "document" in output:
                item["document"] = output["document"][row]
            items.append(item)
        return items
