"""``distrain evaluate`` and ``distrain predict`` on the drug-review archive, on 1 and 2 workers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from support.cli import run_cli

TWO_WORKERS = json.dumps({"distributed": {"cuda_devices": [-1, -1]}})


@pytest.fixture(scope="module")
def drug_reviews(drug_archive, tmp_path_factory):
    """The drug-review data and the session's model trained on it for two epochs (``drug_archive``, shared
    with the serving tests); this module writes its outputs to a folder of its own."""
    return {"archive": drug_archive.archive, "validation": drug_archive.validation,
            "folder": tmp_path_factory.mktemp("evaluate_predict")}


def _cli_ok(*args):
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    return result


def _predictions(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def outputs(drug_reviews):
    """evaluate and predict, each on 1 worker and on 2; 2 workers take 7 instances each per batch,
    and 379 = 27 x 14 + 1, so in the last batch the second worker has nothing."""
    archive, data, folder = str(drug_reviews["archive"]), str(drug_reviews["validation"]), drug_reviews["folder"]
    two_workers = ["-o", TWO_WORKERS, "--batch-size", "7"]
    paths = {name: folder / name for name in ("metrics_1.json", "metrics_2.json", "predictions_1.jsonl", "predictions_2.jsonl")}
    _cli_ok("evaluate", archive, data, "--output-file", str(paths["metrics_1.json"]))
    _cli_ok("evaluate", archive, data, "--output-file", str(paths["metrics_2.json"]), *two_workers)
    _cli_ok("predict", archive, data, "--output-file", str(paths["predictions_1.jsonl"]))
    _cli_ok("predict", archive, data, "--output-file", str(paths["predictions_2.jsonl"]), *two_workers)
    return paths


def test_evaluate_on_two_workers_equals_one_worker_and_predict_output(drug_reviews, outputs):
    metrics_one = json.loads(outputs["metrics_1.json"].read_text())
    metrics_two = json.loads(outputs["metrics_2.json"].read_text())
    assert metrics_one["accuracy"] == metrics_two["accuracy"]
    assert metrics_one["loss"] == pytest.approx(metrics_two["loss"], abs=1e-6)

    gold = [json.loads(line)["label"] for line in drug_reviews["validation"].read_text().splitlines()]
    for name in ("predictions_1.jsonl", "predictions_2.jsonl"):
        labels = [record["label"] for record in _predictions(outputs[name])]
        assert len(labels) == len(gold)
        recomputed = sum(p == g for p, g in zip(labels, gold)) / len(gold)
        assert recomputed == pytest.approx(metrics_one["accuracy"], abs=1e-12), name


def test_predict_writes_one_line_per_input_in_input_order_on_one_and_two_workers(drug_reviews, outputs):
    from distrain.experiment.archive.jobs import load_job

    # the model run directly on all instances at once, in file order: no loader, no workers
    job = load_job(str(drug_reviews["archive"]), str(drug_reviews["validation"]), {})
    logits = job.model(**job.dataset.batch(np.arange(len(job.dataset))))["logits"]
    names = job.model.vocab.tokens("labels")
    expected = [names[i] for i in logits.argmax(-1).tolist()]
    one, two = _predictions(outputs["predictions_1.jsonl"]), _predictions(outputs["predictions_2.jsonl"])
    assert [record["label"] for record in one] == expected
    assert [record["label"] for record in two] == expected
    for first, second in zip(one, two):
        assert first["probs"] == pytest.approx(second["probs"], abs=2e-6)


def test_missing_archive_or_data_is_a_one_line_error(drug_reviews, tmp_path):
    archive, data = str(drug_reviews["archive"]), str(drug_reviews["validation"])
    output = tmp_path / "out.json"
    for command, args, named in (
        ("evaluate", ["missing.tar.gz", data], "missing.tar.gz"),
        ("predict", [archive, str(tmp_path / "missing.jsonl")], "missing.jsonl"),
    ):
        result = run_cli(command, *args, "--output-file", str(output))
        assert result.returncode == 2, result.stderr
        assert named in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not output.exists()


def test_evaluate_refuses_data_without_gold_labels(drug_reviews, tmp_path):
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text('{"text": "worked well for me"}\n{"text": "terrible headaches"}\n')
    result = run_cli("evaluate", str(drug_reviews["archive"]), str(unlabelled), "--output-file", str(tmp_path / "m.json"))
    assert result.returncode == 2 and "no gold labels" in result.stderr
