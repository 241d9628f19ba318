"""Plugin projects written as AllenNLP users write theirs (``projects/``: ``review_sentiment`` in 2.x idioms,
``claim_scores`` in 1.x idioms, ``forum_threads`` with a ``ListField`` of ``TextField``s and a user encoder inside
AllenNLP's ``basic_classifier``), each run from its folder as it is: its AllenNLP command lines through the
``allennlp`` command and the same through ``distrain``, on 1 and 2 workers, and its own ``ModelTestCase`` suite.
Every command is a process of its own, started as the console scripts start (the working directory not on
``sys.path``: only ``.allennlp_plugins`` makes the project's package found)."""

from __future__ import annotations

import json
import shutil
import tarfile
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import safetensors.torch

from test_allennlp_command import TWO_WORKERS, allennlp, distrain, environment, lines

PROJECTS = Path(__file__).parent / "projects"


@dataclass(frozen=True)
class Experiment:
    project: str
    config: str
    data: str  # training and validation data both
    inputs: str  # JSON lines for the model's default predictor
    predictor: str  # that predictor's name (distrain predict reads its data with the reader unless named)
    output_key: str  # a key every prediction carries
    metric: str  # validation_metric's name


EXPERIMENTS = {
    "review_sentiment": Experiment("review_sentiment", "experiments/review_classifier.jsonnet",
                                   "tests/fixtures/reviews.jsonl", "tests/fixtures/sentences.jsonl", "review_sentiment",
                                   "label", "accuracy"),
    "claim_scores": Experiment("claim_scores", "experiments/claim_regressor.jsonnet", "tests/fixtures/claims.tsv",
                               "tests/fixtures/claims.jsonl", "claim_scorer", "predicted_score", "mae"),
    "forum_threads": Experiment("forum_threads", "experiments/thread_classifier.jsonnet",
                                "tests/fixtures/threads.jsonl", "tests/fixtures/threads_to_label.jsonl", "thread_topic",
                                "topic", "accuracy"),
    "forum_threads_flat": Experiment("forum_threads", "experiments/flat_classifier.jsonnet",
                                     "tests/fixtures/threads.jsonl", "tests/fixtures/sentences.jsonl", "text_classifier",
                                     "label", "accuracy"),
}
OWN_TESTS = {"review_sentiment": 3, "claim_scores": 3, "forum_threads": 4}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """Each project copied once; every experiment writes its runs under ``runs/<experiment>-...``."""
    root = tmp_path_factory.mktemp("projects")
    return {name: Path(shutil.copytree(PROJECTS / name, root / name, ignore=shutil.ignore_patterns("__pycache__")))
            for name in OWN_TESTS}


def ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_one_worker_trains_evaluates_and_predicts_with_allennlp_and_distrain(folders, name):
    experiment = EXPERIMENTS[name]
    folder = folders[experiment.project]
    ok(allennlp("train", experiment.config, "-s", f"runs/{name}-one", cwd=folder))
    archive = f"runs/{name}-one/model.tar.gz"
    trained = json.loads((folder / "runs" / f"{name}-one" / "metrics.json").read_text())
    # the archive holds the best epoch's weights, and the validation data is the data evaluated here
    ok(allennlp("evaluate", archive, experiment.data, "--output-file", f"{name}-metrics.json", "--cuda-device", "-1",
                cwd=folder))
    evaluated = json.loads((folder / f"{name}-metrics.json").read_text())
    assert evaluated[experiment.metric] == pytest.approx(trained[f"best_validation_{experiment.metric}"], abs=1e-6)
    ok(allennlp("predict", archive, experiment.inputs, "--output-file", f"{name}-allennlp.out", "--silent", cwd=folder))
    ok(distrain("predict", archive, experiment.inputs, "--predictor", experiment.predictor, "--output-file",
                f"{name}-distrain.out", cwd=folder))
    by_allennlp, by_distrain = lines(folder / f"{name}-allennlp.out"), lines(folder / f"{name}-distrain.out")
    assert len(by_allennlp) == len((folder / experiment.inputs).read_text().splitlines()) == len(by_distrain)
    assert by_allennlp == by_distrain and all(experiment.output_key in output for output in by_allennlp)


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_two_workers_train_with_allennlp_and_distrain_and_predict_alike(folders, name):
    experiment = EXPERIMENTS[name]
    folder = folders[experiment.project]
    ok(distrain("train", experiment.config, "-s", f"runs/{name}-two", "-o", TWO_WORKERS, cwd=folder))
    ok(allennlp("train", experiment.config, "-s", f"runs/{name}-two-allennlp", "-o", TWO_WORKERS, cwd=folder))
    for run in (f"{name}-two", f"{name}-two-allennlp"):
        assert (folder / "runs" / run / "out_worker1.log").exists()
    # one command line per tool, one archive: the same weights give the same answers through either
    archive = f"runs/{name}-two/model.tar.gz"
    ok(distrain("predict", archive, experiment.inputs, "--predictor", experiment.predictor, "--output-file",
                f"{name}-two.out", cwd=folder))
    ok(allennlp("predict", archive, experiment.inputs, "--output-file", f"{name}-two-allennlp.out", "--silent",
                cwd=folder))
    assert lines(folder / f"{name}-two.out") == lines(folder / f"{name}-two-allennlp.out")
    # two workers trained the same config as the allennlp command's two workers did: the same weights
    ok(distrain("predict", f"runs/{name}-two-allennlp/model.tar.gz", experiment.inputs, "--predictor",
                experiment.predictor, "--output-file", f"{name}-two-of-allennlp.out", cwd=folder))
    assert lines(folder / f"{name}-two.out") == lines(folder / f"{name}-two-of-allennlp.out")
    # evaluated by 2 workers, the metrics sync to what one process gives on the same archive
    for workers, extra in (("one", []), ("two", ["-o", TWO_WORKERS])):
        ok(allennlp("evaluate", archive, experiment.data, "--output-file", f"{name}-two-eval-{workers}.json", *extra,
                    cwd=folder))
    one, two = (json.loads((folder / f"{name}-two-eval-{workers}.json").read_text()) for workers in ("one", "two"))
    assert two[experiment.metric] == pytest.approx(one[experiment.metric], abs=1e-6)
    assert two["loss"] == pytest.approx(one["loss"], abs=1e-6)


@pytest.mark.parametrize("project", sorted(OWN_TESTS))
def test_the_projects_own_model_test_case_suites_pass(folders, project):
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                          cwd=folders[project], env=environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{OWN_TESTS[project]} passed" in done.stdout


def test_a_regularizer_the_model_hands_its_base_class_is_the_runs(folders, tmp_path):
    """``claim_scores``' model passes ``regularizer`` to ``Model.__init__`` positionally, as AllenNLP 1.x models
    did: a strong L2 shrinks the trained weights against the same run without it."""
    folder = folders["claim_scores"]
    norms = {}
    for alpha in (0.0, 1.0):
        regularizer = {"regexes": [[".*weight", {"type": "l2", "alpha": alpha}]]}
        overrides = json.dumps({"model": {"regularizer": regularizer}})
        ok(allennlp("train", "experiments/claim_regressor.jsonnet", "-s", f"runs/l2-{alpha}", "-o", overrides,
                    cwd=folder))
        with tarfile.open(folder / "runs" / f"l2-{alpha}" / "model.tar.gz") as archive:
            state = safetensors.torch.load(archive.extractfile("weights.safetensors").read())
        norms[alpha] = float(sum(value.pow(2).sum() for key, value in state.items() if key.endswith("weight")))
    assert norms[1.0] < 0.5 * norms[0.0], norms
