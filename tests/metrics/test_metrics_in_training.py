"""Metrics declared in a model config report the same in metrics.json on 1 and on 2 workers."""

from __future__ import annotations

import json

import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl

METRICS = {
    "accuracy": {"type": "categorical_accuracy"},
    "f1": {"type": "f1", "positive_label": "pos"},
    "macro": {"type": "fbeta", "average": "macro"},
    "auc": {"type": "auc", "positive_label": "pos"},
    "perplexity": {"type": "perplexity"},
}


def test_training_and_validation_metrics_on_two_workers_equal_one_worker(tmp_path):
    # 101 and 37 instances in global batches of 10: the last batch of each leaves a worker empty
    data = {
        "train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(101, seed=1)),
        "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(37, seed=2)),
    }
    runs = {}
    for workers in (1, 2):
        config = text_config(data)
        config["model"]["metrics"] = METRICS
        config["data_loader"] = {"batch_size": 10 // workers}
        config["trainer"]["num_epochs"] = 1
        if workers == 2:
            config["distributed"] = {"cuda_devices": [-1, -1]}
        path = write_config(tmp_path / f"config{workers}.json", config)
        result = run_cli("train", str(path), "-s", str(tmp_path / f"run{workers}"))
        assert result.returncode == 0, result.stderr
        runs[workers] = json.loads((tmp_path / f"run{workers}" / "metrics.json").read_text())
    one, two = runs[1], runs[2]
    reported = [key for key in one if key.startswith(("training_", "validation_")) and key != "training_duration"]
    assert {"validation_auc", "validation_f1_f1", "validation_macro_fscore", "validation_perplexity"} <= set(reported)
    for key in reported:
        assert two[key] == pytest.approx(one[key], abs=1e-6), key


def test_a_gold_id_outside_the_classes_is_named_with_its_metric():
    import torch

    from distrain.metrics.categorical_accuracy import CategoricalAccuracy

    metric = CategoricalAccuracy()
    with pytest.raises(ValueError, match=r"^categorical_accuracy: gold label ids must be in \[0, 2\), got 0\.\.5$"):
        metric(torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([0, 5]))
    metric(torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([1, -100]), mask=torch.tensor([True, False]))
    assert metric.get_metric() == 1.0  # a masked padding id is not checked
