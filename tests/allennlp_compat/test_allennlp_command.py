"""A plugin project written as AllenNLP 2.x users write theirs (``projects/review_sentiment``: ``from allennlp...``
imports, ``from overrides import overrides``, a reader, model and predictor registered by decorators, a jsonnet
config, ``.allennlp_plugins``, a ``ModelTestCase`` suite) runs from its folder as it is: the ``allennlp`` command's
outputs, subcommands and refusals here; every project on 1 and 2 workers and its own tests in test_allennlp_projects.
Every command is a process of its own, started as the console scripts start (the working directory not on
``sys.path``: only ``.allennlp_plugins`` makes the project's package found)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

PROJECT = Path(__file__).parent / "projects" / "review_sentiment"
TWO_WORKERS = '{"distributed": {"cuda_devices": [-1, -1]}}'


def environment(**extra: str) -> dict:
    """distrain's sources importable, offline, and nothing of the tests' own plugins."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), *extra.values()]), HF_HUB_OFFLINE="1")


def allennlp(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "distrain.allennlp.commands", *args], cwd=cwd,
                          env=environment(**extra), capture_output=True, text=True, timeout=600)


def distrain(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-P", "-m", "distrain", *args], cwd=cwd, env=environment(),
                          capture_output=True, text=True, timeout=600)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("project") / "review_sentiment"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture(scope="module")
def trained(project) -> Path:
    done = allennlp("train", "experiments/review_classifier.jsonnet", "-s", "runs/one", cwd=project)
    assert done.returncode == 0, done.stderr[-3000:]
    return project / "runs" / "one" / "model.tar.gz"


def test_allennlp_train_evaluate_and_predict_run_the_projects_command_lines(project, trained):
    evaluated = allennlp("evaluate", str(trained), "tests/fixtures/reviews.jsonl", "--output-file", "metrics.json",
                         "--cuda-device", "-1", "--file-friendly-logging", cwd=project)
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    metrics = json.loads((project / "metrics.json").read_text())
    # the validation file is the file evaluated: allennlp evaluate gives what the training run validated
    validated = json.loads((trained.parent / "metrics.json").read_text())
    assert abs(metrics["accuracy"] - validated["validation_accuracy"]) <= 1e-6, (metrics, validated)
    assert abs(metrics["loss"] - validated["validation_loss"]) <= 1e-6 and metrics["loss"] > 0
    # JSON lines in, through the model's default predictor (the project's), printed and written
    predicted = allennlp("predict", str(trained), "tests/fixtures/sentences.jsonl", "--output-file", "sentences.out",
                         cwd=project)
    assert predicted.returncode == 0, predicted.stderr[-3000:]
    outputs = lines(project / "sentences.out")
    assert len(outputs) == 3 and all(output["label"] in ("pos", "neg") for output in outputs)
    assert predicted.stdout.count("prediction: ") == 3 and 'input 0: {"sentence": "A great and lovely film"}' in predicted.stdout
    # the reader's data: distrain predict, and the named predictor over the same instances, agree
    by_reader = allennlp("predict", str(trained), "tests/fixtures/reviews.jsonl", "--use-dataset-reader", "--silent",
                         "--output-file", "reviews.out", cwd=project)
    by_predictor = allennlp("predict", str(trained), "tests/fixtures/reviews.jsonl", "--use-dataset-reader", "--silent",
                            "--predictor", "review_sentiment", "--batch-size", "5", "--output-file", "reviews2.out",
                            cwd=project)
    assert by_reader.returncode == 0 and by_predictor.returncode == 0, by_reader.stderr[-2000:] + by_predictor.stderr[-2000:]
    one, other = lines(project / "reviews.out"), lines(project / "reviews2.out")
    assert len(one) == len(other) == 24
    for first, second in zip(one, other):
        assert first["label"] == second["label"] and first["probs"] == pytest.approx(second["probs"], abs=1e-6)
    # an input the predictor cannot read: one line naming the file and line
    (project / "bad.jsonl").write_text('{"sentence": "fine"}\n{"text": "no sentence key"}\n')
    bad = allennlp("predict", str(trained), "bad.jsonl", "--output-file", "bad.out", cwd=project)
    assert bad.returncode == 2 and bad.stderr.strip() == "error: bad.jsonl:2: no key 'sentence' in the input"


def test_the_other_subcommands_count_build_the_vocabulary_and_print_results(project, trained):
    counted = allennlp("count-instances", "experiments/review_classifier.jsonnet", cwd=project)
    assert counted.returncode == 0, counted.stderr[-2000:]
    assert counted.stdout.strip() == "Success! One epoch of training contains 24 instances."
    built = allennlp("build-vocab", "experiments/review_classifier.jsonnet", "vocab/vocabulary.tar.gz", cwd=project)
    assert built.returncode == 0, built.stderr[-2000:]
    from distrain.data.vocabulary_files import archive_vocabulary, read_vocabulary_directory

    assert read_vocabulary_directory(project / "vocab" / "vocabulary.tar.gz") == archive_vocabulary(trained)
    again = allennlp("build-vocab", "experiments/review_classifier.jsonnet", "vocab/vocabulary.tar.gz", cwd=project)
    assert again.returncode == 2 and again.stderr.strip().endswith("already exists; use --force to replace it")
    printed = allennlp("print-results", "runs", "-k", "best_validation_accuracy", "no_such_metric", cwd=project)
    assert printed.returncode == 0, printed.stderr
    best = json.loads((trained.parent / "metrics.json").read_text())["best_validation_accuracy"]
    assert printed.stdout.splitlines() == ["model_run, best_validation_accuracy, no_such_metric",
                                           f"runs/one/metrics.json, {best}, N/A"]
    dry = allennlp("train", "experiments/review_classifier.jsonnet", "-s", "runs/dry", "--dry-run", cwd=project)
    assert dry.returncode == 0 and "training data    24 instances" in dry.stdout, dry.stderr[-2000:]
    assert not (project / "runs" / "dry").exists()


def test_where_a_real_allennlp_is_installed_the_command_refuses_in_one_line(tmp_path):
    (tmp_path / "allennlp").mkdir()
    (tmp_path / "allennlp" / "__init__.py").write_text("")
    done = allennlp("train", "config.jsonnet", "-s", "out", cwd=tmp_path, real=str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: a real AllenNLP is installed") and len(done.stderr.splitlines()) == 1
    (tmp_path / "allennlp" / "__init__.py").unlink()  # a bare folder of that name is no AllenNLP
    done = allennlp("--version", cwd=tmp_path, real=str(tmp_path))
    assert done.returncode == 0 and done.stdout.startswith("allennlp (distrain "), done.stderr


@pytest.mark.parametrize("args, message", [
    (["evaluate", "model.tar.gz", "data.jsonl", "--weights-file", "best.th"], "error: --weights-file: distrain "),
    (["train", "config.jsonnet", "-s", "out", "--node-rank", "1"], "error: --node-rank: distrain starts"),
    (["find-lr", "config.jsonnet", "-s", "out"], "error: find-lr: distrain has no learning-rate finder"),
])
def test_flags_distrain_has_no_counterpart_for_are_refused_in_one_line(tmp_path, args, message):
    done = allennlp(*args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith(message), done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_the_allennlp_console_script_and_the_overrides_pin_are_declared():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["allennlp"] == "distrain.allennlp.commands:main"
    assert project["optional-dependencies"]["allennlp"] == ["overrides==3.1.0"]
    assert "allennlp]" in (ROOT / "scripts" / "setup.sh").read_text()
