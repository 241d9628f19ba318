"""``attachment_scores`` gives AllenNLP 2.10.1's ``AttachmentScores`` values on the same batches (made by
tests/allennlp_oracle/parsing_outputs.py: masks, ignored classes, exact matches); its sync across uneven workers is
in test_metrics_distributed.py."""

from __future__ import annotations

import json

import pytest
import torch

from distrain.zoo.structured_prediction.metrics.attachment_scores import AttachmentScores
from support.paths import TESTS

CASES = json.loads((TESTS / "allennlp_golden" / "parsing.json").read_text())["attachment_scores"]


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"ignore{case['ignore_classes']}")
def test_attachment_scores_equal_allennlps_over_several_batches(case):
    metric = AttachmentScores(ignore_classes=case["ignore_classes"])
    for batch in case["batches"]:
        metric(*(torch.tensor(batch[key]) for key in ("predicted_heads", "predicted_labels", "gold_heads",
                                                       "gold_labels", "mask")))
    values = metric.get_metric(reset=True)
    assert values.keys() == case["metric"].keys()
    for key, value in case["metric"].items():
        assert values[key] == pytest.approx(value, abs=1e-12), key
    assert metric.get_metric() == {"UAS": 0.0, "LAS": 0.0, "UEM": 0.0, "LEM": 0.0}
