"""The official CoNLL-2012 coreference scorer (scorer.pl v8.01, beside this file) as an oracle: each document's gold
and predicted clusters written as a key and a response file (one token a line, the coreference column last), its
MUC, B³ and CEAFe totals read back as (recall numerator, denominator, precision numerator, denominator)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

SCRIPT = Path(__file__).with_name("scorer.pl")
METRICS = {"muc": "muc", "bcub": "b_cubed", "ceafe": "ceafe"}
_TOTAL = re.compile(r"^Coreference: Recall: \((\S+) / (\S+)\) .*Precision: \((\S+) / (\S+)\)", re.M)

Clusters = Sequence[Sequence[Sequence[int]]]


def _column(clusters: Clusters, length: int) -> list[str]:
    """Each token's coreference annotation: ``(e`` opens, ``e)`` closes, ``(e)`` is one token, ``|`` joins."""
    marks: list[list[str]] = [[] for _ in range(length)]
    for entity, cluster in enumerate(clusters):
        for start, end in cluster:
            if start == end:
                marks[start].append(f"({entity})")
            else:
                marks[start].append(f"({entity}")
                marks[end].append(f"{entity})")
    return ["|".join(mark) or "-" for mark in marks]


def _write(path: Path, documents: Sequence[Clusters], lengths: Sequence[int]) -> None:
    lines = []
    for number, (clusters, length) in enumerate(zip(documents, lengths)):
        lines.append(f"#begin document (doc{number}); part 000")
        lines += [f"doc{number}\t0\t{i}\tw\t-\t-\t-\t-\t0\t{mark}" for i, mark in enumerate(_column(clusters, length))]
        lines.append("#end document")
    path.write_text("\n".join(lines) + "\n")


def official_totals(gold: Sequence[Clusters], predicted: Sequence[Clusters],
                    metrics: Sequence[str] = tuple(METRICS)) -> dict[str, tuple[float, ...]]:
    """``muc``, ``b_cubed``, ``ceafe`` (of ``metrics``: the scorer's names) -> the scorer's summed (recall num., den.,
    precision num., den.)."""
    lengths = [1 + max([end for clusters in pair for cluster in clusters for _, end in cluster], default=0)
               for pair in zip(gold, predicted)]
    totals = {}
    with tempfile.TemporaryDirectory() as scratch:
        key, response = Path(scratch, "key.conll"), Path(scratch, "response.conll")
        _write(key, gold, lengths)
        _write(response, predicted, lengths)
        for metric in metrics:
            name = METRICS[metric]
            done = subprocess.run(["perl", str(SCRIPT), metric, str(key), str(response), "none"], capture_output=True,
                                  text=True, check=True)
            totals[name] = tuple(float(value) for value in _TOTAL.search(done.stdout).groups())
    return totals


def official_scores(gold: Sequence[Clusters], predicted: Sequence[Clusters]) -> dict[str, float]:
    """AllenNLP's summary of the scorer's totals: the mean over MUC, B³ and CEAFe of precision, recall and F1."""
    values = []
    for recall_num, recall_den, precision_num, precision_den in official_totals(gold, predicted).values():
        precision = precision_num / precision_den if precision_den else 0.0
        recall = recall_num / recall_den if recall_den else 0.0
        values.append((precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0))
    return {f"coref_{name}": sum(value[i] for value in values) / 3 for i, name in enumerate(("precision", "recall", "f1"))}
