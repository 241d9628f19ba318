"""A parser of arbitrary graphs (AllenNLP's ``graph_parser``, for semantic dependencies): every ordered pair of words
is an arc or not (a sigmoid of a biaffine score, kept above ``edge_prediction_threshold``), with a label from a
bilinear layer, so a word may have any number of heads.

The loss is the arcs' binary cross-entropy over all word pairs plus the gold arcs' label cross-entropy, both divided
by the batch's gold arc count, as AllenNLP's; that count is the ``loss_weight``, so a global batch split among
workers gives the same gradient. The metric is the unlabelled arcs' precision, recall and F1.
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.metrics.f1 import F1
from distrain.models.model import Model
from distrain.zoo.structured_prediction.models.biaffine_parser import (
    BiaffineDependencyParser, build_arc_and_tag_layers, embed_words,
)
from distrain.modules.augmented_lstm import variational_dropout
from distrain.modules.feedforward import FeedForward
from distrain.modules.matrix_attentions.bilinear import BilinearMatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding


@Model.register("graph_parser")
@Model.register("sp-graph-parser")
class GraphParser(Model):
    """``text_field_embedder`` (+ ``pos_tag_embedding``) → ``encoder`` → arc and tag feedforwards (one ELU layer
    each by default) → biaffine arc scores and bilinear label scores for every (word, head) pair."""

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Lazy[Seq2SeqEncoder],
                 tag_representation_dim: PositiveInt, arc_representation_dim: PositiveInt,
                 tag_feedforward: Lazy[FeedForward] | None = None, arc_feedforward: Lazy[FeedForward] | None = None,
                 pos_tag_embedding: Lazy[Embedding] | None = None, dropout: Probability = 0.0,
                 input_dropout: Probability = 0.0, edge_prediction_threshold: float = 0.5) -> None:
        super().__init__(vocab)
        build_arc_and_tag_layers(self, vocab, text_field_embedder, encoder, pos_tag_embedding, arc_feedforward,
                                 tag_feedforward, arc_representation_dim, tag_representation_dim)
        self.tag_bilinear = BilinearMatrixAttention(tag_representation_dim, tag_representation_dim,
                                                    label_dim=vocab.get_vocab_size("labels"))
        self.dropout, self.input_dropout = dropout, torch.nn.Dropout(input_dropout)
        self.edge_prediction_threshold = edge_prediction_threshold
        self.unlabelled_f1 = F1(positive_label=1)

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The biaffine parser's width checks, and a threshold strictly between 0 and 1."""
        problems = BiaffineDependencyParser.argument_problems(arguments)
        threshold = arguments.get("edge_prediction_threshold")
        if threshold is not None and not 0 < threshold < 1:
            problems.append(Problem("edge_prediction_threshold", f"is {threshold}; it must lie strictly between 0 "
                                                                 "and 1"))
        return problems

    def forward(self, tokens: TextFieldTensors, pos_tags: torch.Tensor | None = None, metadata: list | None = None,
                arc_tags: torch.Tensor | None = None, **_: Any) -> dict[str, Any]:
        if self.pos_tag_embedding is not None and pos_tags is None:
            raise ValueError("the model embeds POS tags (pos_tag_embedding), but no pos_tags were passed")
        embedded = embed_words(self, tokens, pos_tags)
        mask = get_text_field_mask(tokens)
        encoded = self._dropout(self.encoder(self.input_dropout(embedded), mask))
        head_arcs = self._dropout(self.head_arc_feedforward(encoded))
        child_arcs = self._dropout(self.child_arc_feedforward(encoded))
        head_tags = self._dropout(self.head_tag_feedforward(encoded))
        child_tags = self._dropout(self.child_tag_feedforward(encoded))
        arc_scores = self.arc_attention(head_arcs, child_arcs)
        # (batch, word, head, label)
        tag_logits = self.tag_bilinear(head_tags, child_tags).permute(0, 2, 3, 1).contiguous()
        minus_mask = (~mask).to(arc_scores.dtype) * torch.finfo(arc_scores.dtype).min / 10
        arc_scores = arc_scores + minus_mask.unsqueeze(2) + minus_mask.unsqueeze(1)
        arc_probs, arc_tag_probs = self._greedy_decode(arc_scores, tag_logits, mask)
        output: dict[str, Any] = {"arc_probs": arc_probs, "arc_tag_probs": arc_tag_probs, "mask": mask,
                                  "metadata": metadata}
        if arc_tags is not None:
            arcs = arc_tags.ne(-1)
            pairs = mask.unsqueeze(1) & mask.unsqueeze(2)
            arc_nll = torch.nn.functional.binary_cross_entropy_with_logits(
                arc_scores, arcs.to(arc_scores.dtype), reduction="none") * pairs
            gold = pairs & arcs
            tag_nll = torch.nn.functional.cross_entropy(
                tag_logits.view(-1, tag_logits.shape[-1]), (arc_tags * arcs).view(-1).long(),
                reduction="none").view(arcs.shape) * gold
            count = gold.sum()
            output |= {"arc_loss": arc_nll.sum() / count.float(), "tag_loss": tag_nll.sum() / count.float(),
                       "loss_weight": count}
            output["loss"] = output["arc_loss"] + output["tag_loss"]
            self.unlabelled_f1(torch.stack([1 - arc_probs, arc_probs], -1), arcs.long(), pairs)
        return output

    def _dropout(self, states: torch.Tensor) -> torch.Tensor:
        return variational_dropout(states, self.dropout, self.training)

    @staticmethod
    def _greedy_decode(arc_scores: torch.Tensor, tag_logits: torch.Tensor,
                       mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Arc probabilities (no self arcs, none from padding) and each arc's label distribution."""
        diagonal = torch.diag(arc_scores.new_full((mask.shape[1],), float("-inf")))
        arc_scores = (arc_scores + diagonal).masked_fill(~mask.unsqueeze(2), float("-inf"))
        tag_logits = (tag_logits + diagonal.unsqueeze(0).unsqueeze(-1)).masked_fill(
            ~mask.unsqueeze(2).unsqueeze(-1), float("-inf"))
        return arc_scores.sigmoid(), torch.softmax(tag_logits, dim=-1)

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return self.unlabelled_f1.get_metric(reset)

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        """One ``{"tokens", "arcs", "arc_tags"}`` per sentence: ``arcs`` the (word, head) pairs whose probability
        passes the threshold, ``arc_tags`` their best labels."""
        labels = self.vocab.tokens("labels")
        items = []
        for row, (probs, tag_probs, keep) in enumerate(zip(output["arc_probs"], output["arc_tag_probs"],
                                                           output["mask"])):
            length = int(torch.as_tensor(keep).sum())
            chosen = (torch.as_tensor(probs)[:length, :length] > self.edge_prediction_threshold).nonzero().tolist()
            item: dict[str, Any] = {"arcs": [tuple(pair) for pair in chosen],
                                    "arc_tags": [labels[int(torch.as_tensor(tag_probs)[i, j].argmax())]
                                                 for i, j in chosen]}
            meta = (output.get("metadata") or [None] * (row + 1))[row]
            if meta is not None:
                item["tokens"] = meta["tokens"]
            items.append(item)
        return items
