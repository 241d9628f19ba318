"""A span-based constituency parser (AllenNLP's ``constituency_parser``; Stern et al. 2017, "A Minimal Span-Based
Neural Constituency Parser"): the sentence is encoded, every span gets a vector (``span_extractor``), an optional
feedforward and a label distribution (``NO-LABEL`` among them); the tree is the greedily nested set of labelled spans
(:mod:`distrain.zoo.structured_prediction.models.span_trees`).

The loss is each sentence's mean span cross-entropy averaged over the sentences, as AllenNLP's; each worker's
sentences count once however the batch is split. ``evalb`` (labelled brackets against the gold trees, predicted
trees given the gold POS tags as AllenNLP did) is kept in evaluation only, as there.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.zoo.structured_prediction.metrics.evalb import EvalbBracketingScorer
from distrain.models.model import Model
from distrain.zoo.structured_prediction.models.biaffine_parser import build_word_encoder, embed_words, encoder_problems
from distrain.zoo.structured_prediction.models.span_trees import resolve_overlaps, select_spans, tree_from_spans
from distrain.modules.feedforward import FeedForward
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems
from distrain.modules.span_extractor import SpanExtractor
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding

#: AllenNLP's default ``evalb_directory_path`` (its bundled EVALB); any path turns the bracket scores on, None off
EVALB = "EVALB"
TINY = 1e-13  # AllenNLP's masked softmax and sequence cross-entropy divide by (sum + tiny)


@Model.register("constituency_parser")
class SpanConstituencyParser(Model):
    """``text_field_embedder`` (+ ``pos_tag_embedding``) → ``encoder`` → ``span_extractor`` → ``feedforward`` → a
    linear layer to the ``labels``."""

    default_predictor = "constituency_parser"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, span_extractor: SpanExtractor,
                 encoder: Lazy[Seq2SeqEncoder], feedforward: Lazy[FeedForward] | None = None,
                 pos_tag_embedding: Lazy[Embedding] | None = None, evalb_directory_path: str | None = EVALB) -> None:
        super().__init__(vocab, {"tag_accuracy": CategoricalAccuracy()})
        build_word_encoder(self, vocab, text_field_embedder, pos_tag_embedding, encoder)
        self.span_extractor = span_extractor
        width = span_extractor.get_output_dim()
        self.feedforward_layer = feedforward.construct(input_dim=width) if feedforward else None
        width = self.feedforward_layer.get_output_dim() if self.feedforward_layer is not None else width
        self.tag_projection_layer = torch.nn.Linear(width, vocab.size("labels"))
        if evalb_directory_path is not None:
            self.metrics["evalb"] = EvalbBracketingScorer()
        self.labels = vocab.tokens("labels")
        self.no_label = self.labels.index("NO-LABEL") if "NO-LABEL" in self.labels else -1

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The encoder reads the words' and POS tags' embeddings side by side; the span extractor reads the
        encoder's output and the feedforward the span extractor's."""
        problems, width = encoder_problems(arguments)
        extractor = arguments.get("span_extractor")
        stated = extractor.argument("input_dim") if isinstance(extractor, Lazy) else None
        if width is not None and isinstance(stated, int) and stated != width:
            problems.append(Problem("span_extractor.input_dim", f"is {stated}, but the encoder gives {width}"))
        if isinstance(extractor, Lazy) and arguments.get("feedforward") is not None:
            try:  # a span extractor is a few parameters at most: built, it says its output width
                extractor_width = extractor.construct().get_output_dim()
            except Exception:  # noqa: BLE001 - its own problems are reported under its own key
                extractor_width = None
            problems += chain_problems([("feedforward", arguments["feedforward"])], extractor_width,
                                       "the span_extractor")[0]
        return problems

    def forward(self, tokens: TextFieldTensors, spans: torch.Tensor, metadata: list[dict],
                pos_tags: torch.Tensor | None = None, span_labels: torch.Tensor | None = None,
                **_: Any) -> dict[str, Any]:
        if self.pos_tag_embedding is not None and pos_tags is None:
            raise ValueError("the model embeds POS tags (pos_tag_embedding), but no pos_tags were given")
        embedded = embed_words(self, tokens, pos_tags)
        mask = get_text_field_mask(tokens)
        spans = spans.long()
        span_mask = spans[:, :, 0] >= 0
        encoded = self.encoder(embedded, mask)
        represented = self.span_extractor(encoded, spans, mask, span_mask)
        if self.feedforward_layer is not None:
            represented = self.feedforward_layer(represented)
        logits = self.tag_projection_layer(represented)
        keep = span_mask.unsqueeze(-1).to(logits.dtype)
        probabilities = torch.softmax(logits * keep, dim=-1) * keep
        probabilities = probabilities / (probabilities.sum(-1, keepdim=True) + TINY)
        output: dict[str, Any] = {"logits": logits, "class_probabilities": probabilities, "spans": spans,
                                  "span_mask": span_mask, "num_spans": span_mask.sum(-1),
                                  "tokens": [item["tokens"] for item in metadata],
                                  "pos_tags": [item.get("pos_tags") for item in metadata]}
        if span_labels is not None:
            losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), span_labels.long().clamp(min=0),
                                                       reduction="none") * keep.squeeze(-1)
            output["loss"] = (losses.sum(1) / (keep.squeeze(-1).sum(1) + TINY)).mean()
            self.metrics["tag_accuracy"](probabilities, span_labels, span_mask)
        gold_trees = [item.get("gold_tree") for item in metadata]
        if "evalb" in self.metrics and not self.training and all(tree is not None for tree in gold_trees):
            gold_tags = [[tag for _, tag in tree.pos()] for tree in gold_trees]
            self.metrics["evalb"](self.trees(output, gold_tags), gold_trees)
        return output

    def trees(self, output: dict[str, Any], pos_tags: list[list[str]] | None = None) -> list:
        """Each sentence's tree from its span probabilities."""
        probabilities = output["class_probabilities"].detach().cpu().float()
        spans, counts = output["spans"].cpu(), output["num_spans"].tolist()
        trees = []
        for row, (words, count) in enumerate(zip(output["tokens"], counts)):
            kept = resolve_overlaps(select_spans(probabilities[row, :count], spans[row, :count], len(words),
                                                 self.no_label))
            labels = {(span.start, span.end): self.labels[span.label_index] for span in kept}
            trees.append(tree_from_spans(labels, words, pos_tags[row] if pos_tags is not None else None))
        return trees

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        """``tag_accuracy`` and, when scored, ``evalb_precision``, ``evalb_recall``, ``evalb_f1_measure``."""
        values = {"tag_accuracy": self.metrics["tag_accuracy"].get_metric(reset)}
        if "evalb" in self.metrics:
            values.update(self.metrics["evalb"].get_metric(reset))
        return values

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        """One ``{"tokens", "pos_tags", "trees", "spans", "class_probabilities"}`` per sentence (the tree in the
        bracketed form), as AllenNLP's predictor gives; POS tags only where every sentence has them."""
        tags = output["pos_tags"] if all(tag is not None for tag in output["pos_tags"]) else None
        trees = self.trees(output, tags)
        counts = output["num_spans"].tolist()
        return [{"tokens": words, "pos_tags": output["pos_tags"][row], "trees": str(tree),
                 "spans": output["spans"][row, :counts[row]].tolist(),
                 "class_probabilities": output["class_probabilities"][row, :counts[row]].tolist()}
                for row, (words, tree) in enumerate(zip(output["tokens"], trees))]
