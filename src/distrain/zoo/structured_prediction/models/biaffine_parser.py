"""A graph-based dependency parser (AllenNLP's ``biaffine_parser``; Dozat and Manning, 2016): each word scores every
other as its head with a biaffine attention, and each arc's label with a bilinear layer. Training and greedy
decoding take each word's best head; validation with ``use_mst_decoding_for_validation`` decodes the best tree
(:mod:`distrain.zoo.structured_prediction.modules.chu_liu_edmonds`).

The loss is the arcs' and labels' negative log-likelihood averaged over the batch's words, as AllenNLP's; the
word count is the ``loss_weight``, so a global batch split among workers gives the same gradient.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

import numpy as np
import torch

from distrain.config.constraints import PositiveInt, Probability
from distrain.config.errors import Problem
from distrain.config.lazy import Lazy
from distrain.data.vocabulary import Vocabulary
from distrain.zoo.structured_prediction.metrics.attachment_scores import AttachmentScores
from distrain.models.model import Model
from distrain.modules.augmented_lstm import variational_dropout
from distrain.zoo.structured_prediction.modules.chu_liu_edmonds import decode_mst
from distrain.modules.feedforward import FeedForward
from distrain.modules.matrix_attentions.bilinear import BilinearMatrixAttention
from distrain.modules.seq2seq_encoder import Seq2SeqEncoder
from distrain.modules.sizes import chain_problems, output_dim
from distrain.modules.text_field_embedder import TextFieldEmbedder, TextFieldTensors, get_text_field_mask
from distrain.modules.token_embedders.embedding import Embedding

#: POS tags of punctuation, whose words attachment scores leave out (AllenNLP's list: PTB, CTB and UD tags)
POS_TO_IGNORE = {"`", "''", ":", ",", ".", "PU", "PUNCT", "SYM"}
TINY = 1e-13  # AllenNLP's masked_log_softmax adds log(mask + tiny)


def masked_log_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """AllenNLP's: masked entries pushed down by log(tiny) (not to -inf, so an all-masked row stays finite)."""
    mask = mask.to(scores.dtype)
    while mask.dim() < scores.dim():
        mask = mask.unsqueeze(1)
    return torch.log_softmax(scores + (mask + TINY).log(), dim=-1)


def encoder_problems(arguments: Mapping[str, Any]) -> tuple[list[Problem], int | None]:
    """The width problems of a parser's encoder, which reads the words' and POS tags' embeddings side by side, and
    the encoder's output width (None where unknown)."""
    embedder, pos = arguments.get("text_field_embedder"), arguments.get("pos_tag_embedding")
    width = output_dim(embedder) if embedder is not None else None
    if width is not None and pos is not None:
        pos_width = output_dim(pos)
        width = width + pos_width if pos_width is not None else None
    source = "the text_field_embedder" + (" and pos_tag_embedding" if pos is not None else "")
    return chain_problems([("encoder", arguments.get("encoder"))], width, source)


def build_word_encoder(model: Model, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                       pos_tag_embedding: Lazy[Embedding] | None, encoder: Lazy[Seq2SeqEncoder]) -> None:
    """What every parser reads its words with, set on ``model``: the ``text_field_embedder``, the
    ``pos_tag_embedding`` (or None) and the ``encoder`` over both side by side (see :func:`embed_words`)."""
    model.text_field_embedder = text_field_embedder
    model.pos_tag_embedding = pos_tag_embedding.construct(vocab=vocab) if pos_tag_embedding else None
    width = text_field_embedder.get_output_dim()
    width += model.pos_tag_embedding.get_output_dim() if model.pos_tag_embedding is not None else 0
    model.encoder = encoder.construct(input_dim=width)


def embed_words(model: Model, words: TextFieldTensors, pos_tags: torch.Tensor | None) -> torch.Tensor:
    """The words' embeddings, with their POS tags' beside them where ``model`` embeds tags."""
    embedded = model.text_field_embedder(words)
    if model.pos_tag_embedding is not None:
        embedded = torch.cat([embedded, model.pos_tag_embedding(pos_tags)], -1)
    return embedded


def build_arc_and_tag_layers(model: Model, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder,
                             encoder: Lazy[Seq2SeqEncoder], pos_tag_embedding: Lazy[Embedding] | None,
                             arc_feedforward: Lazy[FeedForward] | None, tag_feedforward: Lazy[FeedForward] | None,
                             arc_representation_dim: int, tag_representation_dim: int) -> int:
    """What AllenNLP's two graph parsers share, set on ``model``: the embedders and encoder
    (:func:`build_word_encoder`), the head and child feedforwards of arcs and tags (one ELU layer each by default)
    and the biaffine arc attention; returns the encoder's width."""
    build_word_encoder(model, vocab, text_field_embedder, pos_tag_embedding, encoder)
    width = model.encoder.get_output_dim()

    def feedforward(recipe: Lazy[FeedForward] | None, size: int) -> FeedForward:
        return recipe.construct(input_dim=width) if recipe else FeedForward(size, width, num_layers=1, activations="elu")

    model.head_arc_feedforward = feedforward(arc_feedforward, arc_representation_dim)
    model.child_arc_feedforward = copy.deepcopy(model.head_arc_feedforward)
    model.arc_attention = BilinearMatrixAttention(arc_representation_dim, arc_representation_dim, use_input_biases=True)
    model.head_tag_feedforward = feedforward(tag_feedforward, tag_representation_dim)
    model.child_tag_feedforward = copy.deepcopy(model.head_tag_feedforward)
    return width


@Model.register("biaffine_parser")
class BiaffineDependencyParser(Model):
    """``text_field_embedder`` (+ ``pos_tag_embedding``) → ``encoder`` → a root sentinel prepended → arc and tag
    feedforwards (one ELU layer each by default) → biaffine arc scores and bilinear label scores."""

    default_predictor = "biaffine_dependency_parser"

    def __init__(self, vocab: Vocabulary, text_field_embedder: TextFieldEmbedder, encoder: Lazy[Seq2SeqEncoder],
                 tag_representation_dim: PositiveInt, arc_representation_dim: PositiveInt,
                 tag_feedforward: Lazy[FeedForward] | None = None, arc_feedforward: Lazy[FeedForward] | None = None,
                 pos_tag_embedding: Lazy[Embedding] | None = None, use_mst_decoding_for_validation: bool = True,
                 dropout: Probability = 0.0, input_dropout: Probability = 0.0) -> None:
        super().__init__(vocab)
        width = build_arc_and_tag_layers(self, vocab, text_field_embedder, encoder, pos_tag_embedding, arc_feedforward,
                                         tag_feedforward, arc_representation_dim, tag_representation_dim)
        self.tag_bilinear = torch.nn.Bilinear(tag_representation_dim, tag_representation_dim,
                                              vocab.get_vocab_size("head_tags"))
        self.dropout, self.input_dropout = dropout, torch.nn.Dropout(input_dropout)
        self.head_sentinel = torch.nn.Parameter(torch.randn([1, 1, width]))
        self.use_mst_decoding_for_validation = use_mst_decoding_for_validation
        pos = vocab.tokens("pos") if "pos" in vocab.namespaces() else []
        self.pos_to_ignore = sorted(index for index, tag in enumerate(pos) if tag in POS_TO_IGNORE)
        self.attachment_scores = AttachmentScores()

    @classmethod
    def argument_problems(cls, arguments: Mapping[str, Any]) -> list[Problem]:
        """The encoder reads the words' and POS tags' embeddings side by side; the feedforwards give the stated
        representation widths."""
        problems, width = encoder_problems(arguments)
        for kind in ("arc", "tag"):
            recipe, stated = arguments.get(f"{kind}_feedforward"), arguments.get(f"{kind}_representation_dim")
            problems += chain_problems([(f"{kind}_feedforward", recipe)], width, "the encoder")[0]
            given = output_dim(recipe, width) if recipe is not None else None
            if given is not None and stated is not None and given != stated:
                problems.append(Problem(f"{kind}_representation_dim", f"is {stated}, but the {kind}_feedforward "
                                                                      f"gives {given}"))
        return problems

    def forward(self, words: TextFieldTensors, pos_tags: torch.Tensor, metadata: list | None = None,
                head_tags: torch.Tensor | None = None, head_indices: torch.Tensor | None = None,
                **_: Any) -> dict[str, Any]:
        embedded = embed_words(self, words, pos_tags)
        mask = get_text_field_mask(words)
        encoded = self.encoder(self.input_dropout(embedded), mask)
        batch, _, width = encoded.shape
        encoded = torch.cat([self.head_sentinel.expand(batch, 1, width), encoded], 1)
        mask = torch.cat([mask.new_ones(batch, 1), mask], 1)
        encoded = self._dropout(encoded)
        head_arcs = self._dropout(self.head_arc_feedforward(encoded))
        child_arcs = self._dropout(self.child_arc_feedforward(encoded))
        head_tag_states = self._dropout(self.head_tag_feedforward(encoded))
        child_tag_states = self._dropout(self.child_tag_feedforward(encoded))
        # arc_logits[b, i, j]: word j as the head of word i (row 0 the root sentinel)
        arc_logits = self.arc_attention(head_arcs, child_arcs)
        minus_mask = (~mask).to(arc_logits.dtype) * -1e8
        attended = arc_logits + minus_mask.unsqueeze(2) + minus_mask.unsqueeze(1)
        if self.training or not self.use_mst_decoding_for_validation:
            heads, tags = self._greedy_decode(head_tag_states, child_tag_states, attended, mask)
        else:
            heads, tags = self._mst_decode(head_tag_states, child_tag_states, attended, mask)
        if head_indices is not None and head_tags is not None:
            gold_heads = torch.cat([head_indices.new_zeros(batch, 1), head_indices.long()], 1)
            gold_tags = torch.cat([head_tags.new_zeros(batch, 1), head_tags.long()], 1)
        else:
            gold_heads, gold_tags = heads.long(), tags.long()
        tag_logits = self._head_tag_logits(head_tag_states, child_tag_states, gold_heads)
        arc_nll, tag_nll, words_count = self._loss(attended, tag_logits, gold_heads, gold_tags, mask)
        if head_indices is not None and head_tags is not None:
            keep = mask[:, 1:]
            for label in self.pos_to_ignore:
                keep = keep & pos_tags.ne(label)
            self.attachment_scores(heads[:, 1:], tags[:, 1:], head_indices, head_tags, keep)
        return {"heads": heads, "head_tags": tags, "arc_logits": arc_logits, "head_tag_logits": tag_logits,
                "arc_loss": arc_nll, "tag_loss": tag_nll, "loss": arc_nll + tag_nll, "loss_weight": words_count,
                "mask": mask, "metadata": metadata}

    def _dropout(self, states: torch.Tensor) -> torch.Tensor:
        return variational_dropout(states, self.dropout, self.training)

    def _head_tag_logits(self, head_states: torch.Tensor, child_states: torch.Tensor,
                         heads: torch.Tensor) -> torch.Tensor:
        """Each word's label scores for the arc from ``heads`` (its head's index), ``(batch, words, labels)``."""
        rows = torch.arange(heads.shape[0], device=heads.device).unsqueeze(1)
        return self.tag_bilinear(head_states[rows, heads].contiguous(), child_states)

    def _loss(self, attended: torch.Tensor, tag_logits: torch.Tensor, heads: torch.Tensor, tags: torch.Tensor,
              mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Arc and label NLL of ``heads``/``tags``, each a mean over the batch's words (the sentinel left out)."""
        batch, length, _ = attended.shape
        arcs = masked_log_softmax(attended, mask) * mask.unsqueeze(2) * mask.unsqueeze(1)
        labels = masked_log_softmax(tag_logits, mask.unsqueeze(-1)) * mask.unsqueeze(-1)
        rows = torch.arange(batch, device=attended.device).unsqueeze(1)
        children = torch.arange(length, device=attended.device).unsqueeze(0).expand(batch, length)
        arc_loss = arcs[rows, children, heads][:, 1:]
        tag_loss = labels[rows, children, tags][:, 1:]
        words = mask.sum() - batch
        return -arc_loss.sum() / words.float(), -tag_loss.sum() / words.float(), words

    def _greedy_decode(self, head_states: torch.Tensor, child_states: torch.Tensor, attended: torch.Tensor,
                       mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each word's best head (not itself, not padding), then the best label of that arc: maybe not a tree."""
        scores = attended + torch.diag(attended.new_full((mask.shape[1],), float("-inf")))
        scores = scores.masked_fill(~mask.unsqueeze(2), float("-inf"))
        heads = scores.max(dim=2)[1]
        return heads, self._head_tag_logits(head_states, child_states, heads).max(dim=2)[1]

    def _mst_decode(self, head_states: torch.Tensor, child_states: torch.Tensor, attended: torch.Tensor,
                    mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The best tree under arc probability × best label probability for every (head, child) pair."""
        batch, length, width = head_states.shape
        shape = [batch, length, length, width]
        pairwise = self.tag_bilinear(head_states.unsqueeze(2).expand(*shape).contiguous(),
                                     child_states.unsqueeze(1).expand(*shape).contiguous())
        label_scores = torch.log_softmax(pairwise, dim=3).permute(0, 3, 1, 2)
        minus_mask = (~mask).to(attended.dtype) * -1e8
        attended = attended + minus_mask.unsqueeze(2) + minus_mask.unsqueeze(1)
        arc_scores = torch.log_softmax(attended, dim=2).transpose(1, 2)
        energy = torch.exp(arc_scores.unsqueeze(1) + label_scores)
        return mst_heads(energy, mask.sum(dim=1).long().cpu().numpy())

    def get_metrics(self, reset: bool = False) -> dict[str, float]:
        return self.attachment_scores.get_metric(reset)

    def make_output_human_readable(self, output: dict[str, Any]) -> list[dict[str, Any]]:
        """One ``{"words", "pos", "predicted_heads", "predicted_dependencies"}`` per sentence (heads 1-based, 0 the
        root), as AllenNLP's predictor gives."""
        labels = self.vocab.tokens("head_tags")
        items = []
        for row, (heads, tags, keep) in enumerate(zip(output["heads"], output["head_tags"], output["mask"])):
            length = int(torch.as_tensor(keep).sum())
            item: dict[str, Any] = {"predicted_heads": [int(h) for h in heads[1:length]],
                                    "predicted_dependencies": [labels[int(t)] for t in tags[1:length]]}
            meta = (output.get("metadata") or [None] * (row + 1))[row]
            if meta is not None:
                item |= {"words": meta["words"], "pos": meta["pos"]}
            items.append(item)
        return items


def mst_heads(energy: torch.Tensor, lengths: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """Heads and labels of each sentence's best tree from ``energy`` ``(batch, labels, head, child)``: no word may
    head the root, and each arc takes its best label among the unconstrained scores. The root's own head and label
    are 0 (so a batch decodes as its sentences alone do)."""
    heads, tags = [], []
    for scores, length in zip(energy.detach().cpu(), lengths):
        best, labels = scores.max(dim=0)
        best[0, :] = 0
        sentence_heads, _ = decode_mst(best.numpy(), int(length), has_labels=False)
        sentence_tags = [labels[head, child].item() for child, head in enumerate(sentence_heads)]
        sentence_heads[0], sentence_tags[0] = 0, 0
        heads.append(sentence_heads)
        tags.append(sentence_tags)
    return (torch.from_numpy(np.stack(heads)).to(energy.device),
            torch.from_numpy(np.stack(tags)).to(energy.device))
