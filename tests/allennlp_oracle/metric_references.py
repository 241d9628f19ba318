"""AllenNLP's own metrics on the distributed metric cases that no package computes (tie-break accuracy, attachment
scores, mention recall, unigram recall): the references tests/metrics/test_metrics_distributed.py compares distrain's
metrics with on 1, 2 and 3 uneven workers. Run with the oracle's Python from the repository root:

    ORACLE/bin/python tests/allennlp_oracle/metric_references.py

The cases' data are built by tests/support/metric_cases.py from their seeds (numpy alone), here as in the tests;
each AllenNLP metric reads the whole data at once. Writes tests/allennlp_golden/metric_references.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from provenance import made_by  # noqa: E402
from support.metric_cases import CASES  # noqa: E402

OUT = TESTS / "allennlp_golden" / "metric_references.json"


def tensors(data: dict) -> dict:
    return {name: torch.as_tensor(array) for name, array in data.items() if array.dtype != object}


def tie_break_accuracy(data: dict) -> dict:
    from allennlp.training.metrics import CategoricalAccuracy

    t = tensors(data)
    metric = CategoricalAccuracy(tie_break=True)
    metric(t["predictions"], t["gold_labels"], t["mask"].bool())
    return metric.get_metric()


def attachment_scores(data: dict) -> dict:
    from allennlp.training.metrics import AttachmentScores

    t = tensors(data)
    metric = AttachmentScores(ignore_classes=CASES["attachment_scores"].metric["ignore_classes"])
    metric(t["predicted_indices"], t["predicted_labels"], t["gold_indices"], t["gold_labels"], t["mask"].bool())
    return metric.get_metric()


def mention_recall(data: dict) -> float:
    from allennlp_models.coref.metrics.mention_recall import MentionRecall

    metric = MentionRecall()
    metadata = [{"clusters": [[tuple(span) for span in cluster] for cluster in item["clusters"]]}
                for item in data["batched_metadata"]]
    metric(torch.as_tensor(data["batched_top_spans"]), metadata)
    return metric.get_metric()


def unigram_recall(data: dict) -> dict:
    from allennlp.training.metrics import UnigramRecall

    t = tensors(data)
    metric = UnigramRecall()
    metric(t["predictions"], t["gold_labels"], t["mask"].bool())
    return metric.get_metric()


ORACLES = {"categorical_accuracy_tie_break": tie_break_accuracy, "attachment_scores": attachment_scores,
           "mention_recall": mention_recall, "unigram_recall": unigram_recall}


def main() -> None:
    references = {name: oracle(CASES[name].data()) for name, oracle in ORACLES.items()}
    OUT.write_text(json.dumps({"made_by": made_by(__file__), "references": references}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {references}")


if __name__ == "__main__":
    main()
