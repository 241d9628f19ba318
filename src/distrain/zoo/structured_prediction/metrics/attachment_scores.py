"""Attachment scores of dependency parses (AllenNLP's ``attachment_scores``): the share of words given their gold
head (UAS) and their gold head and label (LAS), and the share of sentences whose every word is right (UEM, LEM)."""

from __future__ import annotations

from typing import Sequence

import torch

from distrain.metrics.metric import Metric


@Metric.register("attachment_scores")
class AttachmentScores(Metric):
    """``UAS``, ``LAS``, ``UEM``, ``LEM`` from counts summed over workers.

    Called with predicted heads and labels, gold heads and labels, all ``[B, T]``, and a mask ``[B, T]``; words
    whose gold label is one of ``ignore_classes`` (label ids) do not count, nor masked ones (a parser masks
    punctuation). A sentence with no counted word is an exact match, as in AllenNLP; every row is a sentence.
    """

    summed = ("unlabeled_correct", "labeled_correct", "unlabeled_exact", "labeled_exact", "words", "sentences")

    def __init__(self, ignore_classes: Sequence[int] = ()) -> None:
        super().__init__()
        self.ignore_classes = list(ignore_classes)

    def __call__(self, predicted_indices: torch.Tensor, predicted_labels: torch.Tensor,  # type: ignore[override]
                 gold_indices: torch.Tensor, gold_labels: torch.Tensor, mask: torch.Tensor | None = None) -> None:
        predicted_indices, predicted_labels = predicted_indices.detach().long(), predicted_labels.detach().long()
        gold_indices, gold_labels = gold_indices.detach().long(), gold_labels.detach().long()
        keep = torch.ones_like(gold_indices, dtype=torch.bool) if mask is None else mask.detach().bool()
        for label in self.ignore_classes:
            keep = keep & gold_labels.ne(label)
        heads = predicted_indices.eq(gold_indices) & keep
        both = heads & predicted_labels.eq(gold_labels)
        self.accumulate(unlabeled_correct=heads.sum(), labeled_correct=both.sum(),
                        unlabeled_exact=(heads | ~keep).all(-1).sum(), labeled_exact=(both | ~keep).all(-1).sum(),
                        words=keep.sum(), sentences=gold_indices.shape[0])

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        words, sentences = float(stats.get("words", 0.0)), float(stats.get("sentences", 0.0))

        def share(name: str, total: float) -> float:
            return float(stats.get(name, 0.0)) / total if total > 0 else 0.0

        return {"UAS": share("unlabeled_correct", words), "LAS": share("labeled_correct", words),
                "UEM": share("unlabeled_exact", sentences), "LEM": share("labeled_exact", sentences)}
