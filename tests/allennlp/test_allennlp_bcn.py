"""AllenNLP's ``bcn`` (allennlp-models v2.10.1): its archive trained by AllenNLP on the fixture gives AllenNLP's
outputs in distrain (the ``evaluate`` metrics are compared in test_allennlp_archives.py, as for every golden case),
its training configs check, and it trains alike on one and two workers."""

from __future__ import annotations


import numpy as np
import pytest
import torch

from support.allennlp import CONFIGS, golden_job
from support.allennlp_fixtures import ALLENNLP_MODELS, ELMO, needs_fixtures

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS


def test_allennlp_bcn_archive_gives_allennlps_logits_and_probabilities(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("bcn")
    with torch.inference_mode():
        for index, theirs in enumerate(golden):
            mine = job.model(**job.dataset.batch(np.arange(index, index + 1)))
            np.testing.assert_allclose(mine["logits"][0].numpy(), theirs["logits"], atol=1e-5)
            np.testing.assert_allclose(mine["class_probabilities"][0].numpy(), theirs["class_probabilities"], atol=1e-5)




@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """SST trees with all five labels and a 300-wide GloVe file of their words, at local paths."""
    import gzip

    from support.allennlp import FILLER, NEGATIVE, POSITIVE, sentences

    root = tmp_path_factory.mktemp("bcn")
    for name, seed in (("train", 4), ("dev", 5), ("test", 6)):
        lines = []
        for index, (words, label) in enumerate(sentences(15, seed)):
            top = str(index % 5)
            lines.append(f"({top} (2 {words[0]}) ({top} " + " ".join(f"(2 {w})" for w in words[1:]) + "))\n")
        (root / f"{name}.txt").write_text("".join(lines))
    with gzip.open(root / "glove.txt.gz", "wt") as vectors:
        for index, word in enumerate(POSITIVE + NEGATIVE + FILLER):
            vectors.write(word + "".join(f" {((index * 7 + d) % 11) / 10 - 0.5:.1f}" for d in range(300)) + "\n")
    return root


def _local(config: dict) -> dict:
    """The config's data and GloVe paths at the local files (ELMo at the fixture biLM)."""
    for split in ("train", "validation", "test"):
        config[f"{split}_data_path"] = f"{'dev' if split == 'validation' else split}.txt"
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["pretrained_file"] = "glove.txt.gz"
    if "elmo" in config["model"]:
        config["model"]["elmo"] |= {"options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    return config


def test_bcn_config_with_local_glove_passes_check_and_trains_an_epoch(workdir):
    from distrain.config.loading import load_config
    from support.allennlp import check_and_train_an_epoch

    config = _local(load_config(CONFIGS / "biattentive_classification_network.jsonnet"))
    check_and_train_an_epoch(workdir, config, "bcn")


def test_bcn_elmo_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(workdir):
    """The fixture biLM is 32 wide where the config's is 1024: the feed-forward's stated input is that width."""
    from distrain.config.loading import load_config
    from support.allennlp import check_and_train_an_epoch

    config = _local(load_config(CONFIGS / "biattentive_classification_network_elmo.jsonnet"))
    config["model"]["pre_encode_feedforward"]["input_dim"] = 300 + 32
    check_and_train_an_epoch(workdir, config, "bcn_elmo")


def test_bcn_fixture_ends_alike_on_one_and_two_workers(tmp_path):
    """The fixture's model on its SST trees: 8 per batch on one worker is the global batch of 4 on each of two;
    weights and metrics within 1e-5 after 2 epochs (gradient clipping included). SGD, not an adaptive optimizer:
    the self-attentive pooling's bias has a true gradient of 0 (a softmax ignores a shift), and Adam or Adadelta
    would turn its float noise (1e-9, unlike on one and two workers) into steps of the full learning rate."""
    from distrain.config.loading import load_config
    from support.cli import run_cli
    from support.configs import write_config
    from support.distributed import final_metrics, max_weight_difference

    runs = {}
    for workers in (1, 2):
        config = load_config(MODELS / "test_fixtures/classification/biattentive_classification_network/experiment.json")
        for split in ("train", "validation"):
            config[f"{split}_data_path"] = str(MODELS / "test_fixtures/classification/sst.txt")
        config["data_loader"]["batch_sampler"]["batch_size"] = 8 // workers
        config["trainer"] |= {"num_epochs": 2, "optimizer": {"type": "sgd", "lr": 0.5}}
        if workers > 1:
            config["distributed"] = {"cuda_devices": [-1] * workers}
        runs[workers] = tmp_path / f"bcn_{workers}"
        trained = run_cli("train", str(write_config(tmp_path / f"bcn_{workers}.json", config)), "-s", str(runs[workers]),
                          "-f", cwd=tmp_path)
        assert trained.returncode == 0, trained.stderr
    difference = max_weight_difference(runs[1], runs[2])
    print("bcn max weight difference, 1 vs 2 workers:", difference)
    assert difference <= 1e-5
    one, two = final_metrics(runs[1]), final_metrics(runs[2])
    for key in ("training_loss", "validation_loss", "validation_accuracy", "validation_accuracy3"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key
