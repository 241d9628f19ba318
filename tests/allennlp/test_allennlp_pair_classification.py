"""allennlp-models' pair classifiers (``decomposable_attention``, ``esim``, ``bimpm``): their fixture configs
(allennlp-models' ``test_fixtures/pair_classification``, with its snli.jsonl, quora_paraphrase.tsv and the GloVe
sample, read where tests/support/allennlp_fixtures.py finds them) end within 1e-5 on one and two CPU workers (the same global batch), and their ``training_config`` files
(tests/allennlp_configs: only the data paths and the GloVe file changed) pass ``distrain check`` and train an epoch
on SNLI-format (Quora-format for bimpm) lines. AllenNLP's own archives of the fixtures are compared in
test_allennlp_archives.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.allennlp import CONFIGS, GOLDEN, check_and_train_an_epoch
from support.allennlp_fixtures import ALLENNLP_MODELS, ELMO, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference
from distrain.config.loading import load_config

pytestmark = needs_fixtures

REPOSITORY = ALLENNLP_MODELS
#: AllenNLP's fixture biLM: 32 wide, where the configs' (AllenNLP's default ELMo) is 1024
FIXTURE = "test_fixtures/pair_classification/{model}/experiment.json"
#: each model's data (at its training config's path) and the narrower widths its golden case was trained with
DATA = {"decomposable_attention": "snli/snli_1.0_train.jsonl", "esim": "snli/snli_1.0_train.jsonl",
        "bimpm": "quora/train.tsv"}
NARROWER = {"bimpm": {key: value for key, value in json.loads((GOLDEN / "MADE_BY.json").read_text())["cases"]["bimpm"][
    "overrides"].items() if key.startswith("model.")}}  # its widths, not its trainer's or seeds' keys


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """allennlp-models' fixture folder, plus the fixture's SNLI and Quora lines three times over at the training
    configs' paths (nine pairs: two global batches of 8 and 1) and the GloVe sample beside the configs."""
    root = tmp_path_factory.mktemp("pairs") / "allennlp-models"
    shutil.copytree(REPOSITORY, root)
    lines = (REPOSITORY / "test_fixtures" / "pair_classification" / "snli.jsonl").read_text().splitlines()
    (root / "snli").mkdir()
    for split in ("train", "dev"):
        (root / "snli" / f"snli_1.0_{split}.jsonl").write_text("\n".join(lines * 3) + "\n")
    rows = (REPOSITORY / "test_fixtures" / "pair_classification" / "quora_paraphrase.tsv").read_text().splitlines()
    (root / "quora").mkdir()
    for split in ("train", "dev"):
        (root / "quora" / f"{split}.tsv").write_text("\n".join(rows * 3) + "\n")
    shutil.copy(root / "test_fixtures" / "glove.6B.300d.sample.txt.gz", root)
    return root


@pytest.fixture(scope="module")
def worker_runs(workdir) -> dict[tuple[str, int], Path]:
    """Each model's fixture config trained for 2 epochs on the nine pairs by 1 worker (batches of 8) and by 2
    (4 each: AllenNLP's batch size is a worker's), once for every test of this module. ESIM's dropout is 0 here:
    each process draws its own masks, so with dropout the runs differ by design, not by a flaw of the sync.
    bimpm (whose fixture's dropout is 0) runs at its golden case's narrower widths. The optimizer is plain SGD:
    its step is linear in the gradient, where the fixtures' Adam and Adadelta divide by the gradient's own scale,
    which hides a gradient summed or averaged wrongly over workers and turns the float rounding of a weight whose
    gradient is all but zero into a step of the full learning rate (bimpm's LSTMs ended 1.02e-5 apart under Adam
    on an AVX-512 EPYC)."""
    runs = {}
    for model in DATA:
        for workers in (1, 2):
            config = load_config(workdir / FIXTURE.format(model=model))
            config["train_data_path"] = config["validation_data_path"] = DATA[model]
            for dotted, value in NARROWER.get(model, {}).items():
                *parents, key = dotted.split(".")
                block = config
                for parent in parents:
                    block = block[parent]
                block[key] = value
            config["data_loader"]["batch_sampler"]["batch_size"] = 8 // workers
            config["trainer"]["num_epochs"] = 2
            config["trainer"]["optimizer"] = {"type": "sgd", "lr": 0.1}
            if "dropout" in config["model"]:
                config["model"]["dropout"] = 0.0
            if workers > 1:
                config["distributed"] = {"cuda_devices": [-1] * workers}
            path = write_config(workdir / f"{model}_{workers}.json", config)
            runs[model, workers] = workdir / "runs" / f"{model}_{workers}"
            trained = run_cli("train", str(path), "-s", str(runs[model, workers]), "-f", cwd=workdir)
            assert trained.returncode == 0, trained.stderr[-3000:]
    return runs


@pytest.mark.parametrize("model", list(DATA))
def test_pair_classifier_ends_alike_on_one_and_two_cpu_workers(model, worker_runs):
    assert max_weight_difference(worker_runs[model, 1], worker_runs[model, 2]) <= 1e-5
    one, two = final_metrics(worker_runs[model, 1]), final_metrics(worker_runs[model, 2])
    for key in ("training_loss", "validation_loss", "validation_accuracy"):
        assert two[key] == pytest.approx(one[key], abs=1e-5), key


def test_esim_training_config_passes_check_and_trains_an_epoch(workdir):
    shutil.copy(CONFIGS / "esim.jsonnet", workdir)
    run = check_and_train_an_epoch(workdir, load_config(workdir / "esim.jsonnet"), "esim_config")
    assert (run / "model.tar.gz").is_file()


def test_decomposable_attention_training_config_passes_check_and_trains_an_epoch(workdir):
    shutil.copy(CONFIGS / "decomposable_attention.jsonnet", workdir)
    check_and_train_an_epoch(workdir, load_config(workdir / "decomposable_attention.jsonnet"), "da_config")


def _fixture_elmo(config: dict) -> dict:
    """The config's ELMo at the fixture biLM (decomposable_attention_elmo names no files: AllenNLP's default is the
    1024-wide one, downloaded)."""
    elmo = config["model"]["text_field_embedder"]["token_embedders"]["elmo"]
    elmo |= {"options_file": str(ELMO / "options.json"), "weight_file": str(ELMO / "lm_weights.hdf5")}
    return config


def test_decomposable_attention_elmo_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(workdir):
    """The widths that follow the biLM's: attend on 32, compare premise and its aligned hypothesis, 2 x 32."""
    config = _fixture_elmo(load_config(CONFIGS / "decomposable_attention_elmo.jsonnet"))
    config["model"]["attend_feedforward"]["input_dim"] = 32
    config["model"]["compare_feedforward"]["input_dim"] = 64
    check_and_train_an_epoch(workdir, config, "da_elmo_config")


def test_esim_elmo_config_with_the_fixture_elmo_passes_check_and_trains_an_epoch(workdir):
    """The width that follows the biLM's: the encoder reads 32."""
    config = _fixture_elmo(load_config(CONFIGS / "esim_elmo.jsonnet"))
    config["model"]["encoder"]["input_size"] = 32
    check_and_train_an_epoch(workdir, config, "esim_elmo_config")


def test_bimpm_training_config_passes_check_and_trains_an_epoch(workdir):
    shutil.copy(CONFIGS / "bimpm.jsonnet", workdir)
    check_and_train_an_epoch(workdir, load_config(workdir / "bimpm.jsonnet"), "bimpm_config")


def test_bimpm_widths_that_do_not_match_are_one_line_each_before_data_is_read(workdir, tmp_path):
    """A matcher reads half an encoder's output and the aggregator all five matchers' vectors: each width that
    differs (and a full match without its direction) is named with its key path, and the data (a path that does
    not exist here) is never opened."""
    config = load_config(workdir / FIXTURE.format(model="bimpm"))
    config["model"]["matcher_backward2"]["hidden_dim"] = 400
    config["model"]["aggregator"]["input_size"] = 263
    del config["model"]["matcher_forward1"]["is_forward"]  # the full match needs to know which end is last
    config["train_data_path"] = config["validation_data_path"] = str(tmp_path / "missing.tsv")
    checked = run_cli("check", str(write_config(tmp_path / "bimpm.json", config)), cwd=workdir)
    assert checked.returncode == 2
    assert "model.matcher_backward2.hidden_dim: is 400, but half of encoder2's output gives 200" in checked.stderr
    assert "model.aggregator.input_size: is 263, but the matching vectors (the five matchers' widths summed) gives " \
           "264" in checked.stderr
    assert "model.matcher_forward1: is_forward is needed for the full match" in checked.stderr
    assert "missing.tsv" not in checked.stderr and "Traceback" not in checked.stderr


def test_esim_widths_that_do_not_chain_are_one_line_each_before_data_is_read(workdir, tmp_path):
    config = load_config(workdir / FIXTURE.format(model="esim"))
    config["model"]["projection_feedforward"]["input_dim"] = 199
    config["model"]["output_logit"]["input_dim"] = 6
    config["train_data_path"] = str(tmp_path / "missing.jsonl")
    checked = run_cli("check", str(write_config(tmp_path / "esim.json", config)), cwd=workdir)
    assert checked.returncode == 2
    assert "model.projection_feedforward.input_dim: is 199, but the enhanced words (4 × the encoder's width) gives 200" \
        in checked.stderr
    assert "model.output_logit.input_dim: is 6, but output_feedforward gives 5" in checked.stderr
    assert "missing.jsonl" not in checked.stderr and "Traceback" not in checked.stderr
