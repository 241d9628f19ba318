"""``allennlp.training.metrics`` names, each checked against scikit-learn, numpy or a hand count."""

from __future__ import annotations

import numpy
import pytest
import torch
from sklearn.metrics import precision_recall_fscore_support

from distrain.allennlp.data import Vocabulary


def test_fbeta_measure_gives_per_class_lists_as_scikit_learn():
    from distrain.allennlp.training.metrics import FBetaMeasure

    generator = torch.Generator().manual_seed(0)
    scores = torch.randn(40, 4, generator=generator)
    gold = torch.randint(0, 4, (40,), generator=generator)
    metric = FBetaMeasure(beta=2.0)
    metric(scores, gold)
    result = metric.get_metric()
    precision, recall, fscore, _ = precision_recall_fscore_support(gold, scores.argmax(-1), beta=2.0,
                                                                   zero_division=0)
    numpy.testing.assert_allclose(result["precision"], precision)
    numpy.testing.assert_allclose(result["recall"], recall)
    numpy.testing.assert_allclose(result["fscore"], fscore)


def _vocabulary(tags):
    vocabulary = Vocabulary()
    vocabulary.add_tokens_to_namespace(tags, "tags")
    return vocabulary


def test_span_based_f1_counts_spans_and_reports_allennlp_keys():
    from distrain.allennlp.training.metrics import SpanBasedF1Measure

    tags = ["O", "B-PER", "I-PER", "B-LOC", "U-MISC"]  # U-MISC: a tag of another scheme, never used
    vocabulary = _vocabulary(tags)
    gold = torch.tensor([[1, 2, 0, 3, 0]])
    predicted = torch.tensor([[1, 2, 0, 1, 0]])  # PER right; LOC missed, a wrong PER found
    metric = SpanBasedF1Measure(vocabulary, "tags")
    metric(torch.nn.functional.one_hot(predicted, len(tags)).float(), gold)
    result = metric.get_metric()
    assert result["precision-overall"] == pytest.approx(1 / 2)
    assert result["recall-overall"] == pytest.approx(1 / 2)
    assert result["f1-measure-LOC"] == 0.0 and result["precision-PER"] == pytest.approx(1 / 2)
    assert "precision-MISC" not in result  # only labels seen are reported
    assert metric._false_negatives["LOC"] == 1 and metric._true_positives["MISC"] == 0


def test_span_based_f1_merges_continuation_spans():
    from distrain.allennlp.training.metrics import SpanBasedF1Measure

    tags = ["O", "B-ARG1", "B-C-ARG1"]
    metric = SpanBasedF1Measure(_vocabulary(tags), "tags")
    sequence = torch.tensor([[1, 0, 2]])
    metric(torch.nn.functional.one_hot(sequence, len(tags)).float(), sequence)
    assert metric._true_positives == {"ARG1": 1}


def test_covariance_and_entropy_against_numpy():
    from distrain.allennlp.training.metrics import Covariance, Entropy

    x, y = torch.randn(30), torch.randn(30)
    mask = torch.rand(30) > 0.3
    covariance = Covariance()
    covariance(x[:15], y[:15], mask[:15])
    covariance(x[15:], y[15:], mask[15:])
    expected = numpy.cov(x.numpy(), y.numpy(), fweights=mask.numpy().astype(int))[0, 1]
    assert covariance.get_metric() == pytest.approx(expected, rel=1e-6)
    entropy = Entropy()
    entropy(torch.zeros(2, 4))  # uniform over 4
    assert entropy.get_metric()["entropy"] == pytest.approx(numpy.log(4))


def test_sequence_accuracy_counts_a_sequence_any_of_whose_candidates_matches():
    from distrain.allennlp.training.metrics import MeanAbsoluteError, SequenceAccuracy

    gold = torch.tensor([[1, 2, 3], [1, 2, 3]])
    candidates = torch.tensor([[[0, 0, 0], [1, 2, 3]], [[1, 2, 0], [0, 2, 3]]])
    accuracy = SequenceAccuracy()
    accuracy(candidates, gold)
    assert accuracy.get_metric() == {"accuracy": 0.5}
    accuracy.reset()
    accuracy(candidates, gold, torch.tensor([[True, True, False], [True, True, False]]))
    assert accuracy.get_metric() == {"accuracy": 1.0}
    error = MeanAbsoluteError()
    error(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 4.0]))
    assert error.get_metric() == {"mae": 1.5}
