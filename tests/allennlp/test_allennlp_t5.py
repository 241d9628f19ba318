"""T5 summarisation as AllenNLP 2.10.1 did it: its ``t5`` archive (tests/allennlp_golden/t5, trained by
scripts/allennlp_golden.py on allennlp-models' t5 fixture with the tiny random T5 of tests/allennlp_oracle/make_tiny_t5.py), whose
weights are AllenNLP's own T5 module's, loaded into transformers' T5 and decoded by distrain's beam search, gives
AllenNLP's token ids, summed log-probabilities and text, and its teacher-forced loss and logits; allennlp-models'
``t5_cnn_dm`` config (Adafactor, fairscale's checkpoint wrapper and FSDP) passes ``distrain check``, trains an epoch on
its 2 CPU workers under FSDP and ends as 1 worker does. (``distrain evaluate`` on the archive, its ROUGE, BLEU and
loss: tests/allennlp/test_allennlp_archives.py, every golden case.)"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, GOLDEN, golden_job, train_on_one_and_two_workers
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
GENERATION = MODELS / "test_fixtures" / "generation"
STORIES = GENERATION / "bart" / "data"
COMPARED = 4  # validation stories decoded here (all 10 by ``distrain evaluate`` in test_allennlp_archives.py)


@pytest.fixture(scope="module")
def decoded():
    """distrain's decoding of AllenNLP's archive (the first validation stories in one batch) and its teacher-forced
    outputs (one story at a time, as tests/allennlp_oracle/t5_teacher_forced_golden.py ran AllenNLP's)."""
    previous = os.getcwd()
    os.chdir(MODELS)
    try:
        job, golden = golden_job("t5")
        with torch.inference_mode():
            mine = job.model(**job.dataset.batch(np.arange(COMPARED)))
            job.model.train()  # no dropout in the tiny T5: training mode only skips the decoding
            forced = [job.model(**job.dataset.batch(np.arange(index, index + 1))) for index in range(3)]
        return mine, golden[:COMPARED], forced
    finally:
        os.chdir(previous)


def test_allennlp_t5_archive_decodes_allennlps_ids_text_and_log_probabilities(decoded):
    """The best beam of AllenNLP's beam search (3 wide, 20 steps): the same ids and text, its summed
    log-probability within 1e-6 a step."""
    mine, golden, _ = decoded
    for row, theirs in enumerate(golden):
        assert mine["predictions"][row].tolist() == theirs["predictions"]
        assert mine["predicted_text"][row] == theirs["predicted_text"]
    steps = len(golden[0]["predictions"])
    np.testing.assert_allclose(mine["predicted_log_probs"].numpy(), [t["predicted_log_probs"] for t in golden],
                               atol=1e-6 * steps, rtol=0)


def test_allennlp_t5_archive_gives_allennlps_teacher_forced_loss_and_logits(decoded):
    """Plain cross-entropy over the target (its 54 tokens, none padded: AllenNLP's mean over positions is the mean
    over tokens here) and the decoder's logits at the first positions, within 1e-5."""
    _, _, forced = decoded
    theirs = json.loads((GOLDEN / "t5" / "teacher_forced.json").read_text())["cases"]
    for mine, expected in zip(forced, theirs, strict=True):
        assert mine["loss_weight"].item() == expected["target_length"]
        assert abs(mine["loss"].item() - expected["loss"]) < 2e-6  # two float32 steps at 6.5
        positions = len(expected["decoder_logits"])
        np.testing.assert_allclose(mine["decoder_logits"][0, :positions].numpy(), expected["decoder_logits"],
                                   atol=1e-5, rtol=0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``distrain check`` on the config as copied (2 CPU workers under FSDP), then an epoch of it (1 step of 4
    stories) on those 2 workers (2 stories each) and on 1 worker without the ``distributed`` block (4)."""
    from distrain.config.loading import load_config

    root = tmp_path_factory.mktemp("t5")
    shutil.copytree(STORIES / "cnn_stories", root / "cnndm" / "cnn_stories")
    (root / "cnndm" / "url_lists").mkdir()
    urls = (STORIES / "url_lists" / "all_train.txt").read_text().splitlines()
    (root / "cnndm" / "url_lists" / "all_train.txt").write_text("\n".join(urls[:4]) + "\n")
    (root / "cnndm" / "url_lists" / "all_val.txt").write_text(urls[4] + "\n")
    shutil.copytree(GENERATION / "t5-tiny-random", root / "t5-tiny-random")
    shutil.copy(CONFIGS / "t5_cnn_dm.jsonnet", root / "t5_cnn_dm.jsonnet")
    checked = run_cli("check", "t5_cnn_dm.jsonnet", cwd=root)
    assert checked.returncode == 0, checked.stderr
    assert "FullyShardedDataParallelStrategy" in checked.stdout and "HuggingfaceAdafactor" in checked.stdout
    config = load_config(root / "t5_cnn_dm.jsonnet")

    def config_for(workers: int) -> dict:
        trainer = {**config["trainer"], "num_epochs": 1}
        if workers == 2:
            return config | {"data_loader": {**config["data_loader"], "batch_size": 2}, "trainer": trainer}
        return {key: value for key, value in config.items() if key != "distributed"} | {"trainer": trainer}

    return train_on_one_and_two_workers(root, config_for)


def test_t5_cnn_dm_config_trains_an_epoch_and_two_fsdp_workers_end_within_1e_5_of_one(runs):
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    assert one["epoch"] == 0 and 0 <= one["validation_ROUGE-L"] <= 1 and 0 <= one["validation_BLEU"] <= 1
    # both archives hold T5's tied embeddings and output layer once, as t5.shared.weight (same names, fsdp too)
    assert max_weight_difference(runs[1], runs[2]) < 1e-5
    assert abs(one["training_loss"] - two["training_loss"]) < 1e-5
    for name in ("validation_loss", "validation_ROUGE-1_F1", "validation_ROUGE-L", "validation_BLEU"):
        assert abs(one[name] - two[name]) < 1e-6, name
