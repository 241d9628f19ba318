"""NAQANet against AllenNLP 2.10.1: archives the oracle trained on allennlp-models' test_fixtures/rc/naqanet (all four
answering abilities, the passage span alone, the two numeric ones) give AllenNLP's head scores, loss, question ids
and answers here (their ``evaluate`` metrics are checked with the other golden cases in test_allennlp_archives.py;
the fixture config's check and epoch run in the fixture sweep); 2 CPU workers, moving average included, end where
1 does."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from support.allennlp import golden_job, plain_sgd_on, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
FIXTURE = MODELS / "test_fixtures" / "rc" / "naqanet" / "experiment.json"
DROP = MODELS / "test_fixtures" / "rc" / "drop.json"
HEADS = ("_answer_ability_predictor", "_passage_span_start_predictor", "_passage_span_end_predictor",
         "_question_span_start_predictor", "_question_span_end_predictor", "_number_sign_predictor",
         "_count_number_predictor")
CASES = ("naqanet", "naqanet_passage_span", "naqanet_numbers")


def _captured_heads(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """What each head of ``model`` gave in its last forward pass, by AllenNLP's name, as the golden script keeps it."""
    captured: dict[str, torch.Tensor] = {}
    for key in HEADS:
        head = getattr(model, key[1:], None)
        if head is not None:
            head.register_forward_hook(lambda module, inputs, output, key=key:
                                       captured.__setitem__(key, output.squeeze(-1)))
    return captured


@pytest.mark.parametrize("case", CASES)
def test_allennlp_naqanet_archive_gives_allennlps_head_scores_loss_and_answers(case, monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job(case)
    captured = _captured_heads(job.model)
    kept = [key for key in HEADS if key in golden[0]]
    assert kept == [key for key in HEADS if hasattr(job.model, key[1:])]
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            for key in kept:  # one question: no padding, every position scored
                np.testing.assert_allclose(captured[key].numpy(), theirs[key], atol=1e-5, rtol=0, err_msg=key)
            # a question with no way to its answer has AllenNLP's "big negative" likelihood: a loss of 3.4e38
            assert math.isclose(float(mine["loss"]), theirs["loss"], rel_tol=1e-6, abs_tol=1e-5), index
            assert mine["question_id"] == [theirs["question_id"]]
            assert json.loads(json.dumps(mine["answer"][0])) == theirs["answer"], index


def test_the_golden_answers_differ_between_questions():
    """The archives' questions get answers of more than one kind and value, so the comparison above is telling."""
    answers = [json.loads((Path(__file__).parents[1] / "allennlp_golden" / case / "outputs.json").read_text())
               for case in CASES]
    for case, outputs in zip(CASES, answers):
        assert len({json.dumps(output["answer"]) for output in outputs}) > 1, case
    kinds = {output["answer"]["answer_type"] for output in answers[0]}
    assert kinds == {"count", "passage_span"}, kinds  # all four abilities: the ability chosen differs too


# ------------------------------------------------------------------------------------------- configs and workers
def _same_shapes(path: Path) -> Path:
    """One fixture passage and four questions whose words are one set in four orders, each answered a different
    way (a passage span, a count, a difference of passage numbers, a question span): NAQANet's convolutions read
    padding, so equal shapes keep a worker's slice padded as the whole global batch is."""
    passage = json.loads(DROP.read_text())["nfl_653"]
    words = "how many points did the chiefs score".split()
    answers = [{"spans": ["Philip Rivers"]}, {"number": "2"}, {"number": "27"}, {"spans": ["chiefs"]}]
    questions = [{"query_id": f"q{i}", "question": " ".join(words[i:] + words[:i]),
                  "answer": {"number": "", "spans": [], "date": {"day": "", "month": "", "year": ""}, **answer}}
                 for i, answer in enumerate(answers)]
    path.write_text(json.dumps({"nfl_653": {"passage": passage["passage"], "qa_pairs": questions}}))
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("naqanet")
    _same_shapes(root / "same_shapes.json")
    shutil.copy(DROP, root / "drop.json")
    return root


def _small_naqanet(workers: int) -> dict:
    """The fixture's NAQANet (dropout and layer dropout off) and its moving average: 3 epochs of global batches of 2
    questions (the loader's batch size is each worker's), plain SGD (as for QANet: rounding noise in gradients that
    are zero in exact arithmetic would become Adam steps of the full rate)."""
    return plain_sgd_on(json.loads(FIXTURE.read_text()), "same_shapes.json", workers, epochs=3)


def test_two_workers_end_within_1e_5_of_one_worker(workdir):
    runs = train_on_one_and_two_workers(workdir, _small_naqanet)
    difference = max_weight_difference(runs[1], runs[2])
    assert difference <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    assert one["validation_f1"] == pytest.approx(two["validation_f1"], abs=1e-9)
    assert one["training_loss"] == pytest.approx(two["training_loss"], rel=1e-6)
    first = json.loads((runs[1] / "metrics_epoch_0.json").read_text())
    assert abs(first["validation_loss"] - one["validation_loss"]) > 1e-2  # the weights moved: the bound says something


@pytest.mark.parametrize("key, value, expected", [
    ("model.answering_abilities", ["passage_span_extraction", "guessing"], "model.answering_abilities[1]"),
    ("dataset_reader.skip_when_all_empty", ["spans"], "dataset_reader.skip_when_all_empty[0]"),
    ("dataset_reader.instance_format", "squad2", "dataset_reader.instance_format"),
])
def test_a_wrong_ability_or_answer_kind_is_named_before_data_is_read(workdir, key, value, expected):
    config = json.loads(FIXTURE.read_text())
    config["train_data_path"] = "missing.json"  # never read: the names are wrong first
    section, name = key.split(".")
    config[section][name] = value
    checked = run_cli("check", str(write_config(workdir / "wrong.json", config)), cwd=workdir)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr, checked.stderr
    assert f"error: {expected}: expected '" in checked.stderr, checked.stderr
