"""``fbeta_multi_label`` (and AllenNLP's ``FBetaMultiLabelMeasure`` / ``FBetaVerboseMeasure`` over it and ``fbeta``)
against scikit-learn's ``precision_recall_fscore_support`` on random scores: an independent implementation."""

from __future__ import annotations

import pytest
import torch
from sklearn.metrics import precision_recall_fscore_support

from distrain.allennlp.training.metrics import FBetaMultiLabelMeasure, FBetaVerboseMeasure
from distrain.config.errors import ConfigError
from distrain.metrics.fbeta_multi_label import FBetaMultiLabel


def scores_and_gold(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    scores = torch.rand(40, 6, generator=generator)
    gold = (torch.rand(40, 6, generator=generator) > 0.6).long()
    return scores, gold


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
def test_multi_label_fbeta_is_sklearns(average):
    scores, gold = scores_and_gold(3)
    metric = FBetaMultiLabel(beta=2.0, average=average, threshold=0.4)
    metric(scores[:25], gold[:25])
    metric(scores[25:], gold[25:])  # two updates sum as one
    result = metric.get_metric()
    precision, recall, fscore, _ = precision_recall_fscore_support(gold.numpy(), (scores >= 0.4).long().numpy(),
                                                                   beta=2.0, average=average, zero_division=0)
    if average is None:
        for index in range(6):
            assert result[f"{index}_precision"] == pytest.approx(precision[index])
            assert result[f"{index}_recall"] == pytest.approx(recall[index])
            assert result[f"{index}_fscore"] == pytest.approx(fscore[index])
    else:
        assert [result["precision"], result["recall"], result["fscore"]] == pytest.approx([precision, recall, fscore])


def test_masked_rows_count_nowhere_and_allennlps_counters_read_the_sums():
    scores, gold = scores_and_gold(5)
    mask = torch.arange(40) % 3 != 0
    measure = FBetaMultiLabelMeasure()
    with pytest.raises(RuntimeError):
        measure.get_metric()
    measure(scores, gold, mask)
    kept = (scores[mask] >= 0.5).long()
    precision, recall, fscore, _ = precision_recall_fscore_support(gold[mask].numpy(), kept.numpy(), zero_division=0)
    result = measure.get_metric()
    assert result["precision"] == pytest.approx(list(precision)) and result["fscore"] == pytest.approx(list(fscore))
    assert measure._pred_sum.tolist() == kept.sum(0).tolist()
    assert measure._true_negative_sum.tolist() == ((1 - kept) * (1 - gold[mask])).sum(0).tolist()
    with pytest.raises(ConfigError):
        FBetaMultiLabelMeasure(average="mega")


def test_the_verbose_measure_gives_every_class_and_average_at_once():
    generator = torch.Generator().manual_seed(7)
    logits, gold = torch.randn(30, 4, generator=generator), torch.randint(0, 4, (30,), generator=generator)
    measure = FBetaVerboseMeasure(index_to_label={0: "a", 1: "b", 2: "c", 3: "d"})
    measure(logits, gold)
    result = measure.get_metric()
    predicted = logits.argmax(-1).numpy()
    for average in ("micro", "macro", "weighted"):
        expected = precision_recall_fscore_support(gold.numpy(), predicted, average=average, zero_division=0)[:3]
        assert [result[f"{average}-{kind}"] for kind in ("precision", "recall", "fscore")] == pytest.approx(expected)
    per_class = precision_recall_fscore_support(gold.numpy(), predicted, zero_division=0)
    assert [result[f"{name}-recall"] for name in "abcd"] == pytest.approx(list(per_class[1]))
