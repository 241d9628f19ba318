"""The shipped example configs train on the packaged real data and reach their accuracy bars."""

from __future__ import annotations

import json

import pytest

from support.cli import run_cli
from support.paths import ROOT


@pytest.fixture(scope="module")
def example_data(prepared_data):
    return prepared_data / "data"


def train_example(config: str, data_dir, out, **overrides):
    name = config.split("_")[0]
    name = "drug_reviews" if name == "drug" else name
    paths = {"train_data_path": str(data_dir / name / "train.jsonl"),
             "validation_data_path": str(data_dir / name / "validation.jsonl"),
             "trainer.progress_bar": False, **overrides}
    result = run_cli("train", str(ROOT / "configs" / config), "-s", str(out), "-o", json.dumps(paths))
    assert result.returncode == 0, result.stderr
    return json.loads((out / "metrics.json").read_text())


def test_digits_mlp_reaches_95_percent(example_data, tmp_path):
    metrics = train_example("digits_mlp.jsonnet", example_data, tmp_path / "digits")
    assert metrics["best_validation_accuracy"] >= 0.95


def test_drug_reviews_bag_of_embeddings_beats_the_majority_class(example_data, tmp_path):
    metrics = train_example("drug_reviews_boe.jsonnet", example_data, tmp_path / "drug")
    assert metrics["best_validation_accuracy"] >= 0.69  # majority class: 0.654
