"""The CoNLL-2012 coreference scores (AllenNLP's ``conll_coref_scores``): MUC, B³ and CEAFe precision and recall of
the predicted clusters against the gold ones, and the mean of the three (the CoNLL score), as the official scorer
(``scorer.pl`` v8.01) computes them for clusterings without singletons.

A document's predicted clusters are read from the model's antecedent links (each kept span joins the cluster of
the span it links to; spans without a link are in none), as AllenNLP's ``get_predicted_clusters``. Each metric is a
precision and a recall fraction whose numerators and denominators are sums over documents; CEAFe's numerator (the
best one-to-one alignment of gold and predicted entities) is found per document, where the document is. So the
twelve sums are the sufficient statistics, added over workers: every worker's share gives the one-process scores.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import torch

from distrain.metrics.assignment import best_assignment
from distrain.metrics.metric import Metric

Mention = tuple[int, int]
Cluster = tuple[Mention, ...]


def predicted_clusters(top_spans: Sequence[Sequence[int]], antecedent_indices: Sequence[Sequence[int]],
                       predicted_antecedents: Sequence[int]) -> list[Cluster]:
    """The clusters the antecedent links make: span i with ``predicted_antecedents[i] = a >= 0`` joins the cluster
    of span ``antecedent_indices[i][a]`` (which starts one if it is in none)."""
    cluster_of: dict[Mention, int] = {}
    clusters: list[list[Mention]] = []
    for i, chosen in enumerate(predicted_antecedents):
        if chosen < 0:
            continue
        antecedent = tuple(top_spans[antecedent_indices[i][chosen]])
        if antecedent not in cluster_of:
            cluster_of[antecedent] = len(clusters)
            clusters.append([antecedent])
        mention = tuple(top_spans[i])
        clusters[cluster_of[antecedent]].append(mention)
        cluster_of[mention] = cluster_of[antecedent]
    return [tuple(cluster) for cluster in clusters]


def _owner(clusters: Sequence[Cluster]) -> dict[Mention, Cluster]:
    return {mention: cluster for cluster in clusters for mention in cluster}


def muc(clusters: Sequence[Cluster], other: Sequence[Cluster]) -> tuple[float, float]:
    """Links kept: per cluster, its size less the parts ``other`` cuts it into (a mention ``other`` lacks is a part of
    its own); over the links it has (size less one)."""
    owner = _owner(other)
    kept = total = 0
    for cluster in clusters:
        total += len(cluster) - 1
        parts = {owner[mention] for mention in cluster if mention in owner}
        kept += len(cluster) - len(parts) - sum(mention not in owner for mention in cluster)
    return kept, total


def b_cubed(clusters: Sequence[Cluster], other: Sequence[Cluster], singletons: bool = False) -> tuple[float, float]:
    """Per mention, the share of its cluster that ``other`` puts with it, summed; over the mentions. Unless
    ``singletons``, one-mention clusters on either side count for nothing (AllenNLP's reading: gold clusters have
    none); with it, they count as the reference scorer counts them."""
    owner = _owner(other)
    numerator, denominator = 0.0, 0
    for cluster in clusters:
        if len(cluster) == 1 and not singletons:
            continue
        overlaps = Counter(owner[mention] for mention in cluster if mention in owner)
        numerator += sum(count * count for part, count in overlaps.items()
                         if singletons or len(part) != 1) / len(cluster)
        denominator += len(cluster)
    return numerator, denominator


def ceafe(predicted: Sequence[Cluster], gold: Sequence[Cluster]) -> tuple[float, int, float, int]:
    """The best alignment's summed entity similarity (φ4: 2|K∩R| / (|K|+|R|)) over the predicted entities (one-
    mention ones left out) and over the gold ones."""
    predicted = [cluster for cluster in predicted if len(cluster) != 1]
    scores = [[2 * len(set(key) & set(response)) / (len(key) + len(response)) for response in predicted]
              for key in gold]
    similarity = sum(scores[row][column] for row, column in best_assignment(scores)) if predicted and gold else 0.0
    return similarity, len(predicted), similarity, len(gold)


def document_counts(predicted: Sequence[Cluster], gold: Sequence[Cluster], singletons: bool = False) -> list[float]:
    """One document's twelve sums: for MUC, B³ and CEAFe, precision's numerator and denominator, then recall's."""
    counts = [*muc(predicted, gold), *muc(gold, predicted)]
    counts += [*b_cubed(predicted, gold, singletons), *b_cubed(gold, predicted, singletons)]
    return counts + list(ceafe(predicted, gold))


def fraction(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


@Metric.register("conll_coref_scores")
class ConllCorefScores(Metric):
    """``coref_precision``, ``coref_recall`` and ``coref_f1``: the means over MUC, B³ and CEAFe of each one's
    precision, recall and F1 (AllenNLP's). Called with the model's kept spans, each span's antecedent candidates
    and its chosen one (-1: none), and each document's metadata (its gold ``clusters``). ``score_singletons``: B³
    counts one-mention gold entities, as the CoNLL-2012 reference scorer does; AllenNLP's B³ (the default) leaves
    them out. OntoNotes' gold has none, so the two agree there."""

    summed = ("counts",)

    def __init__(self, allow_singletons: bool = False, score_singletons: bool = False) -> None:
        super().__init__()
        self.allow_singletons = allow_singletons  # AllenNLP's: only loosens a check on its links
        self.score_singletons = score_singletons

    def __call__(self, top_spans: torch.Tensor, antecedent_indices: torch.Tensor,  # type: ignore[override]
                 predicted_antecedents: torch.Tensor, metadata_list: Sequence[dict[str, Any]]) -> None:
        counts = torch.zeros(12, dtype=torch.float64)
        spans, candidates = top_spans.detach().cpu().tolist(), antecedent_indices.detach().cpu().tolist()
        chosen = predicted_antecedents.detach().cpu().tolist()
        for row, metadata in enumerate(metadata_list):
            gold = [tuple(tuple(mention) for mention in cluster) for cluster in metadata["clusters"]]
            predicted = predicted_clusters(spans[row], candidates[row], chosen[row])
            counts += torch.tensor(document_counts(predicted, gold, self.score_singletons), dtype=torch.float64)
        self.accumulate(counts=counts)

    def scores(self, stats: dict[str, torch.Tensor]) -> dict[str, tuple[float, float, float]]:
        """``muc``, ``b_cubed`` and ``ceafe``: (precision, recall, F1) each."""
        counts = stats.get("counts", torch.zeros(12, dtype=torch.float64)).tolist()
        result = {}
        for name, at in (("muc", 0), ("b_cubed", 4), ("ceafe", 8)):
            precision, recall = fraction(*counts[at:at + 2]), fraction(*counts[at + 2:at + 4])
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            result[name] = (precision, recall, f1)
        return result

    def compute(self, stats: dict[str, torch.Tensor]) -> dict[str, float]:
        scores = list(self.scores(stats).values())
        return {f"coref_{name}": sum(score[i] for score in scores) / 3
                for i, name in enumerate(("precision", "recall", "f1"))}
