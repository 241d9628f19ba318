"""The share of gold mentions among the spans a coreference model kept (AllenNLP's ``mention_recall``): how much
its span pruning leaves for the antecedent scores to link. Counts of gold and of kept gold mentions are summed over
documents and over workers, so every worker's share gives the one-process value."""

from __future__ import annotations

from typing import Any, Sequence

import torch

from distrain.metrics.metric import Metric


@Metric.register("mention_recall")
class MentionRecall(Metric):
    """Called with the kept spans ``(batch, spans, 2)`` and each document's metadata (its gold ``clusters``)."""

    summed = ("gold", "recalled")

    def __call__(self, batched_top_spans: torch.Tensor,  # type: ignore[override]
                 batched_metadata: Sequence[dict[str, Any]]) -> None:
        gold_count = recalled = 0
        for spans, metadata in zip(batched_top_spans.detach().cpu().tolist(), batched_metadata):
            gold = {tuple(mention) for cluster in metadata["clusters"] for mention in cluster}
            gold_count += len(gold)
            recalled += len(gold & {tuple(span) for span in spans})
        self.accumulate(gold=gold_count, recalled=recalled)

    def compute(self, stats: dict[str, torch.Tensor]) -> float:
        gold = float(stats.get("gold", 0))
        return float(stats.get("recalled", 0)) / gold if gold else 0.0
