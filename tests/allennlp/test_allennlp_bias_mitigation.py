"""AllenNLP's bias mitigation (``allennlp.fairness``): ``bias_mitigator_applicator`` with the ``linear`` and ``hard``
mitigators over ``two_means`` and ``paired_pca`` directions, and ``_pretrained`` module blocks.

- allennlp-models' ``binary_gender_bias_mitigated_snli_roberta.jsonnet`` (tests/allennlp_configs: data paths, the
  local MiniLM, the base archive and the seed file changed) passes ``distrain check`` and trains an epoch on the
  bias_mitigation fixture's SNLI lines, its base model the ``snli_roberta`` config's archive trained here first;
- AllenNLP's archive of the bias_mitigation fixture (``hard`` + ``paired_pca``, scripts/allennlp_golden.py) gives
  AllenNLP's logits in distrain (its ``evaluate`` metrics: test_allennlp_archives.py);
- that fixture config ends alike on one and two CPU workers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, check_and_train_an_epoch, golden_job
from support.cli import run_cli
from support.configs import write_config
from support.paths import TESTS
from distrain.config.loading import load_config

MODELS = TESTS / "allennlp_fixtures" / "allennlp-models"
FIXTURE = MODELS / "test_fixtures" / "pair_classification" / "bias_mitigation"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """The fixture's SNLI lines at the configs' paths, debiaswe's pairs beside them, and the ``snli_roberta``
    config trained an epoch on those lines (the base model the bias-mitigated config loads)."""
    root = tmp_path_factory.mktemp("bias")
    (root / "snli").mkdir()
    for split in ("train", "dev", "test"):
        shutil.copy(FIXTURE / f"snli_{split}.jsonl", root / "snli" / f"snli_1.0_{split}.jsonl")
    shutil.copytree(FIXTURE / "debiaswe", root / "debiaswe")
    shutil.copy(CONFIGS / "snli_roberta.jsonnet", root)
    trained = run_cli("train", "snli_roberta.jsonnet", "-s", "runs/snli_roberta", "-o", '{"trainer.num_epochs": 1}',
                      cwd=root)
    assert trained.returncode == 0, trained.stderr[-3000:]
    return root


def test_binary_gender_bias_mitigated_snli_roberta_config_passes_check_and_trains_an_epoch(workdir):
    config = load_config(CONFIGS / "binary_gender_bias_mitigated_snli_roberta.jsonnet")
    run = check_and_train_an_epoch(workdir, config, "mitigated")
    assert (run / "model.tar.gz").is_file()


def test_allennlp_bias_mitigated_archive_gives_allennlps_logits_and_probabilities(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("bias_mitigation")
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            np.testing.assert_allclose(mine["logits"][0].numpy(), theirs["logits"], atol=1e-5)
            np.testing.assert_allclose(torch.softmax(mine["logits"][0], -1).numpy(), theirs["probs"], atol=1e-5)
