"""scorch (an independent implementation of the CoNLL-2012 coreference scores, a test dependency) as the oracle for
distrain's ``conll_coref_scores``: MUC, B³ and CEAFe precision, recall and F1 of predicted clusters against gold
ones. scorch scores one clustering at a time and gives ratios, not the reference scorer's numerator and denominator
totals; those totals summed over documents are the scores of all the documents as one clustering, each mention
tagged with its document: MUC's and B³'s sums add up, and CEAFe's best alignment pairs no entities of two documents
(their similarity is 0), so it is the per-document alignments together."""

from __future__ import annotations

from typing import Sequence

from scorch import scores

Clusters = Sequence[Sequence[Sequence[int]]]
METRICS = {"muc": scores.muc, "b_cubed": scores.b_cubed, "ceafe": scores.ceaf_e}


def _as_one(documents: Sequence[Clusters]) -> list[set]:
    return [{(number, tuple(mention)) for mention in cluster}
            for number, clusters in enumerate(documents) for cluster in clusters]


def scorch_scores(gold: Sequence[Clusters], predicted: Sequence[Clusters]) -> dict[str, tuple[float, float, float]]:
    """``muc``, ``b_cubed``, ``ceafe`` -> scorch's (precision, recall, F1) over the documents (scorch returns recall
    first; this puts precision first, as distrain's ``ConllCorefScores.scores``)."""
    key, response = _as_one(gold), _as_one(predicted)
    result = {}
    for name, metric in METRICS.items():
        recall, precision, f1 = metric(key, response)
        result[name] = (precision, recall, f1)
    return result


def allennlp_means(gold: Sequence[Clusters], predicted: Sequence[Clusters]) -> dict[str, float]:
    """AllenNLP's summary of the three: ``coref_precision``, ``coref_recall`` and ``coref_f1``, each the mean over
    MUC, B³ and CEAFe of scorch's."""
    values = list(scorch_scores(gold, predicted).values())
    names = ("precision", "recall", "f1")
    return {f"coref_{name}": sum(value[i] for value in values) / 3 for i, name in enumerate(names)}
