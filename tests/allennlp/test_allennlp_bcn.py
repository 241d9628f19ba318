"""AllenNLP's ``bcn`` (allennlp-models v2.10.1): its archive trained by AllenNLP on the fixture gives AllenNLP's
outputs in distrain (the ``evaluate`` metrics are compared in test_allennlp_archives.py, as for every golden case),
its training configs check, and it trains alike on one and two workers."""

from __future__ import annotations

import json
import tarfile

import numpy as np
import pytest
import torch

from support.paths import TESTS

GOLDEN = TESTS / "allennlp_golden" / "bcn"
MODELS = TESTS / "allennlp_fixtures" / "allennlp-models"


def test_allennlp_bcn_archive_gives_allennlps_logits_and_probabilities(monkeypatch):
    from distrain.experiment.archive_jobs import load_job

    monkeypatch.chdir(MODELS)
    with tarfile.open(GOLDEN / "model.tar.gz") as archive:
        data = json.loads(archive.extractfile("config.json").read())["validation_data_path"]
    job = load_job(str(GOLDEN / "model.tar.gz"), data, {})
    golden = json.loads((GOLDEN / "outputs.json").read_text())
    assert len(job.dataset) == len(golden)
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            np.testing.assert_allclose(mine["logits"][0].numpy(), theirs["logits"], atol=1e-5)
            np.testing.assert_allclose(mine["class_probabilities"][0].numpy(), theirs["class_probabilities"], atol=1e-5)
