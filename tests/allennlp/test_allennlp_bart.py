"""BART summarisation as AllenNLP 2.10.1 did it: its ``bart`` archive (tests/allennlp_golden/bart, trained by
scripts/allennlp_golden.py on allennlp-models' CNN/DailyMail fixture with the tiny random BART of
tests/allennlp_oracle/make_tiny_bart.py) decoded by distrain's beam search gives AllenNLP's token ids, summed log-probabilities
and text, and its ROUGE and BLEU; allennlp-models' ``bart_cnn_dm`` config passes ``distrain check``, trains an
epoch and ends alike on 1 and 2 CPU workers; ``distrain predict`` writes the decoded text; ``distrain train`` on a
url whose story is missing exits 2 with one line naming the url list's file:line and writes nothing.
(``distrain evaluate`` on the archive: tests/allennlp/test_allennlp_archives.py, every golden case.)"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, GOLDEN, golden_job, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
GENERATION = MODELS / "test_fixtures" / "generation"
STORIES = GENERATION / "bart" / "data"


#: the validation stories whose decoding is compared here (all 10 are decoded and scored by ``distrain evaluate`` in
#: tests/allennlp/test_allennlp_archives.py, against AllenNLP's metrics)
COMPARED = 4


@pytest.fixture(scope="module")
def decoded():
    """distrain's decoding of AllenNLP's archive: the first validation stories in one batch."""
    import os

    previous = os.getcwd()
    os.chdir(MODELS)
    try:
        job, golden = golden_job("bart")
        with torch.inference_mode():
            mine = job.model(**job.dataset.batch(np.arange(COMPARED)))
            job.model.train()  # teacher forcing, as AllenNLP's tests/allennlp_oracle/bart_teacher_forced_golden.py ran it
            forced = [job.model(**job.dataset.batch(np.arange(index, index + 1))) for index in range(3)]
        return mine, golden[:COMPARED], forced
    finally:
        os.chdir(previous)


def test_allennlp_bart_archive_decodes_allennlps_ids_text_and_log_probabilities(decoded):
    """The best beam of AllenNLP's beam search (size 4, 20 steps): the same ids and text, and its summed
    log-probability within 1e-6 a step (float32 sums of ~60: AllenNLP decoded one story at a time, here four share
    a padded batch)."""
    mine, golden, _ = decoded
    for row, theirs in enumerate(golden):
        assert mine["predictions"][row].tolist() == theirs["predictions"]
        assert mine["predicted_text"][row] == theirs["predicted_text"]
    steps = len(golden[0]["predictions"])
    np.testing.assert_allclose(mine["log_probabilities"].numpy(), [t["log_probabilities"] for t in golden],
                               atol=1e-6 * steps, rtol=0)


def test_allennlp_bart_archive_gives_allennlps_teacher_forced_loss_and_logits(decoded):
    """The training loss as AllenNLP computes it (label smoothing 0.1, averaged over target tokens) and the
    decoder's logits, one story at a time."""
    _, _, forced = decoded
    theirs = json.loads((GOLDEN / "bart" / "teacher_forced.json").read_text())["cases"]
    for mine, expected in zip(forced, theirs, strict=True):
        assert abs(mine["loss"].item() - expected["loss"]) < 1e-6
        positions = len(expected["decoder_logits"])
        np.testing.assert_allclose(mine["decoder_logits"][0, :positions].numpy(), expected["decoder_logits"],
                                   atol=1e-5, rtol=0)


@pytest.fixture(scope="module")
def cnndm(tmp_path_factory):
    """The config's layout in small: 4 training stories and 1 validation story of the fixture, the tiny BART."""
    root = tmp_path_factory.mktemp("bart")
    shutil.copytree(STORIES / "cnn_stories", root / "cnndm" / "cnn_stories")
    (root / "cnndm" / "url_lists").mkdir()
    urls = (STORIES / "url_lists" / "all_train.txt").read_text().splitlines()
    (root / "cnndm" / "url_lists" / "all_train.txt").write_text("\n".join(urls[:4]) + "\n")
    (root / "cnndm" / "url_lists" / "all_val.txt").write_text(urls[4] + "\n")
    shutil.copytree(GENERATION / "bart-tiny-random", root / "bart-tiny-random")
    shutil.copy(CONFIGS / "bart_cnn_dm.jsonnet", root / "bart_cnn_dm.jsonnet")
    return root


@pytest.fixture(scope="module")
def runs(cnndm):
    """``distrain check`` on the config as copied, then an epoch of it (2 steps) on 1 worker (batches of 2) and on
    2 (1 each: the same global batch; the one validation story is decoded by one of them)."""
    from distrain.config.loading import load_config

    checked = run_cli("check", "bart_cnn_dm.jsonnet", cwd=cnndm)
    assert checked.returncode == 0, checked.stderr
    config = load_config(cnndm / "bart_cnn_dm.jsonnet")

    def config_for(workers: int) -> dict:
        distributed = {"distributed": {"cuda_devices": [-1] * workers}} if workers > 1 else {}
        return config | {"data_loader": {**config["data_loader"], "batch_size": 2 // workers},
                         "trainer": {**config["trainer"], "num_epochs": 1}} | distributed

    return train_on_one_and_two_workers(cnndm, config_for)


def test_bart_cnn_dm_config_trains_an_epoch_and_two_workers_end_within_1e_5_of_one(runs):
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    assert one["epoch"] == 0 and 0 <= one["validation_ROUGE-L"] <= 1 and 0 <= one["validation_BLEU"] <= 1
    assert max_weight_difference(runs[1], runs[2]) < 1e-5
    assert abs(one["training_loss"] - two["training_loss"]) < 1e-5
    for name in ("validation_ROUGE-1_F1", "validation_ROUGE-L", "validation_BLEU"):
        assert abs(one[name] - two[name]) < 1e-6, name


def test_distrain_predict_writes_the_decoded_text(cnndm, runs):
    predicted = run_cli("predict", str(runs[1] / "model.tar.gz"), "cnndm/url_lists/all_val.txt", "--output-file",
                        "predictions.jsonl", cwd=cnndm)
    assert predicted.returncode == 0, predicted.stderr
    lines = [json.loads(line) for line in (cnndm / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 1 and isinstance(lines[0]["predicted_text"], str)
    assert len(lines[0]["predicted_tokens"]) == len(lines[0]["predictions"]) <= 140


def test_distrain_train_on_a_url_without_its_story_exits_2_with_one_line_and_writes_nothing(cnndm):
    """A url whose story is in neither folder: one line naming the url list's file:line, before any training."""
    from distrain.config.loading import load_config

    bad = cnndm / "cnndm" / "url_lists" / "bad_train.txt"
    bad.write_text((cnndm / "cnndm" / "url_lists" / "all_train.txt").read_text()
                   + "\nhttp://example.com/no-such-story.html\n")
    config = load_config(cnndm / "bart_cnn_dm.jsonnet") | {"train_data_path": "cnndm/url_lists/bad_train.txt"}
    trained = run_cli("train", str(write_config(cnndm / "bad.json", config)), "-s", "bad_run", cwd=cnndm)
    assert trained.returncode == 2, trained.stderr
    errors = [line for line in trained.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "cnndm/url_lists/bad_train.txt:6: no story " in errors[0], trained.stderr
    assert "Traceback" not in trained.stderr and not (cnndm / "bad_run").exists()
