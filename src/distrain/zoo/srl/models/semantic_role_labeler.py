"""AllenNLP's ``srl`` (He et al. 2017, "Deep Semantic Role Labeling: What Works and What's Next"): each word's
embedding joined with an embedding of whether it is the predicate, an encoder, and a tag per word; at prediction
time the tags are the best BIO-legal path through the tag probabilities (:mod:`distrain.modules.viterbi`).

The loss is each sentence's mean token cross-entropy averaged over the sentences, as AllenNLP's; each worker's
sentences count once however the batch is split. The span scores (``srl_eval``) are kept in evaluation only, as
AllenNLP kept them (decoding every training batch would cost a Viterbi pass per sentence).
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.zoo.srl.metrics.srl_eval import SrlEvalScorer
from distrain.models.model import Model
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.viterbi import bio_transition_potentials, viterbi_decode

#: AllenNLP's default ``srl_eval_path`` (its bundled script); any path turns the span scores on, None off
SRL_EVAL = "srl-eval.pl"


class RoleTagging(Model):
    """What both SRL models share: the loss, the BIO-constrained decoding and the span scores, given tag scores."""

    default_predictor = "semantic_role_labeling"

    def setup_tagging(self, label_smoothing: float | None, ignore_span_metric: bool, srl_eval_path: str | None) -> None:
        self.label_smoothing = label_smoothing or 0.0
        self.ignore_span_metric = ignore_span_metric
        if srl_eval_path is not None:
            self.span_metric = SrlEvalScorer(ignore_classes=["V"])
        self.use_label_names("labels")
        self.labels = self.vocab.tokens("labels")
        transitions, start = bio_transition_potentials(self.labels)
        self.register_buffer("_transitions", transitions, persistent=False)
        self.register_buffer("_start_transitions", start, persistent=False)

    def tag_outputs(self, logits: torch.Tensor, mask: torch.Tensor, tags: torch.Tensor | None,
                    metadata: list[dict]) -> dict[str, Any]:
        probabilities = torch.softmax(logits, dim=-1)
        output: dict[str, Any] = {"logits": logits, "class_probabilities": probabilities, "mask": mask,
                                  "words": [item["words"] for item in metadata],
                                  "verb": [item["verb"] for item in metadata]}
        if "offsets" in metadata[0]:
            output["wordpiece_offsets"] = [item["offsets"] for item in metadata]
        if tags is not None:
            losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), tags.clamp(min=0), reduction="none",
                                                       label_smoothing=self.label_smoothing)
            keep = mask.to(losses.dtype)
            output["loss"] = ((losses * keep).sum(1) / keep.sum(1).clamp(min=1)).mean()
            if not self.ignore_span_metric and "span_metric" in self.metrics and not self.training:
                predicted = self.decode(output)
                self.span_metric(predicted, [item["gold_tags"] for item in metadata],
                                 [item["verb_index"] for item in metadata])
        return output

    def decode(self, output: dict[str, Any]) -> list[list[str]]:
        """Each sentence's best BIO-legal tags, one a word (for word pieces: each word's first piece's)."""
        lengths = output["mask"].sum(1).tolist()
        transitions, start = self._transitions.cpu(), self._start_transitions.cpu()
        tags = []
        for row, length in enumerate(lengths):
            path, _ = viterbi_decode(output["class_probabilities"][row, :length].detach().cpu().float(),
                                     transitions, start)
            names = [self.labels[i] for i in path]
            if "wordpiece_offsets" in output:
                names = [names[i] for i in output["wordpiece_offsets"][row]]
            tags.append(names)
        return tags

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """The overall span scores (``f1-measure-overall`` ...), as AllenNLP reports them; none when ignored."""
        if self.ignore_span_metric or "span_metric" not in self.metrics:
            return {}
        values = self.span_metric.get_metric(reset)
        return {key: value for key, value in values.items() if "overall" in key}

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        """One ``{"words", "verb", "tags"}`` per predicate."""
        return [{"words": words, "verb": verb, "tags": tags}
                for words, verb, tags in zip(output["words"], output["verb"], self.decode(output))]


@Model.register("srl")
class SemanticRoleLabeler(RoleTagging):
    """``text_field_embedder`` (dropout) ⊕ ``binary_feature_dim``-wide predicate indicator → ``encoder`` → tags."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Lazy[Seq2SeqEncoder],
                 binary_feature_dim: PositiveInt, embedding_dropout: Probability = 0.0,
                 label_smoothing: Probability | None = None, ignore_span_metric: bool = False,
                 srl_eval_path: str | None = SRL_EVAL) -> None:
        super().__init__(vocab)
        self.text_field_embedder = text_field_embedder
        self.binary_feature_embedding = torch.nn.Embedding(2, binary_feature_dim)
        self.encoder = encoder.construct(input_dim=text_field_embedder.get_output_dim() + binary_feature_dim)
        self.tag_projection_layer = torch.nn.Linear(self.encoder.get_output_dim(), vocab.size("labels"))
        self.embedding_dropout = torch.nn.Dropout(embedding_dropout)
        self.setup_tagging(label_smoothing, ignore_span_metric, srl_eval_path)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The encoder's stated input width must be the embedder's plus ``binary_feature_dim``."""
        embedder, extra = arguments.get("text_field_embedder"), arguments.get("binary_feature_dim")
        width = output_dim(embedder) if embedder is not None else None
        if width is None or not isinstance(extra, int):
            return []
        source = "the text_field_embedder plus binary_feature_dim"
        return chain_problems([("encoder", arguments.get("encoder"))], width + extra, source)[0]

    def forward(self, tokens: TextFieldTensors, verb_indicator: torch.Tensor, metadata: list[dict],
                tags: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        mask = get_text_field_mask(tokens)
        embedded = self.embedding_dropout(self.text_field_embedder(tokens))
        indicator = self.binary_feature_embedding(verb_indicator.long())
        encoded = self.encoder(torch.cat([embedded, indicator], -1), mask)
        return self.tag_outputs(self.tag_projection_layer(encoded), mask, tags, metadata)
