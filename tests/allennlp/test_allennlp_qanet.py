"""QANet against AllenNLP 2.10.1: the golden archive (allennlp-models' test_fixtures/rc/qanet, trained by the oracle
with its exponential moving average) gives AllenNLP's span scores and answers here (its ``evaluate`` metrics are
checked with the other golden cases in test_allennlp_archives.py); allennlp-models' qanet training config passes
check and trains an epoch on the fixture SQuAD file, GloVe at the fixture's 300-wide sample; 2 CPU workers, moving
average included, end where 1 does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from support.allennlp import (
    CONFIGS, assert_span_answers_match, check_and_train_an_epoch, golden_job, train_on_one_and_two_workers,
)
from support.allennlp_fixtures import ALLENNLP_MODELS, needs_fixtures
from support.cli import run_cli
from support.configs import write_config
from support.distributed import final_metrics, max_weight_difference

pytestmark = needs_fixtures

MODELS = ALLENNLP_MODELS
SQUAD = MODELS / "test_fixtures" / "rc" / "squad.json"
GLOVE = MODELS / "test_fixtures" / "glove.6B.300d.sample.txt.gz"


def test_allennlp_qanet_archive_gives_allennlps_span_scores_and_answers(monkeypatch):
    monkeypatch.chdir(MODELS)
    job, golden = golden_job("qanet")
    assert_span_answers_match(job, golden)


def test_positional_features_are_allennlps_sines_then_cosines():
    from distrain.zoo.rc.modules.positional_features import add_positional_features

    table = add_positional_features(torch.zeros(1, 3, 5))[0]
    # 2 timescales (1 and 1e-4), sines first, then cosines, then a zero column for the odd width
    expected = torch.tensor([[np.sin(t), np.sin(t * 1e-4), np.cos(t), np.cos(t * 1e-4), 0.0] for t in range(3)])
    torch.testing.assert_close(table, expected.float())


def test_layer_dropout_skips_deeper_layers_more_and_scales_them_when_evaluating():
    from distrain.modules.residual_with_layer_dropout import ResidualWithLayerDropout

    residual = ResidualWithLayerDropout(0.5)
    given, produced = torch.ones(2), torch.full((2,), 4.0)
    residual.eval()
    assert residual(given, produced, 1, 4).tolist() == [1 + 4 * (1 - 0.5 / 4)] * 2
    residual.train()
    torch.manual_seed(0)
    kept = sum(residual(given, produced, 4, 4)[0].item() == 5 for _ in range(400))
    assert 150 < kept < 250  # the last of 4 layers is skipped half the time
    assert ResidualWithLayerDropout(0.0).train()(given, produced, 4, 4).tolist() == [5.0, 5.0]


def test_exponential_moving_average_follows_allennlps_decay_and_swaps_back():
    from distrain.training.moving_averages.exponential import ExponentialMovingAverage

    weight = torch.nn.Parameter(torch.tensor([1.0]))
    frozen = torch.nn.Parameter(torch.tensor([5.0]), requires_grad=False)
    average = ExponentialMovingAverage([("w", weight), ("f", frozen)], decay=0.9)
    assert list(average.shadows) == ["w"]  # AllenNLP averages the trainable parameters only
    with torch.no_grad():
        weight.fill_(3.0)
    average.apply(1)  # decay min(0.9, 2 / 11)
    shadow = 2 / 11 * 1.0 + 9 / 11 * 3.0
    with average.averaged():
        assert weight.item() == pytest.approx(shadow)
    assert weight.item() == 3.0
    with torch.no_grad():
        weight.fill_(0.0)
    average.apply(100)  # decay 0.9 now
    assert average.shadows["w"].item() == pytest.approx(0.9 * shadow)


# ------------------------------------------------------------------------------------------- configs and workers
def _short_squad(path: Path) -> Path:
    """The fixture paragraphs' first 300 characters, with the questions answered there: the full-size config
    trains in seconds."""
    pieces = []
    for paragraph in json.loads(SQUAD.read_text())["data"][0]["paragraphs"]:
        questions = [{**question, "answers": answers} for question in paragraph["qas"]
                     if (answers := [a for a in question["answers"] if a["answer_start"] + len(a["text"]) <= 300])]
        if questions:
            pieces.append({"context": paragraph["context"][:300], "qas": questions})
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": pieces}]}))
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("qanet")
    shutil.copy(SQUAD, root / "squad.json")
    _short_squad(root / "short_squad.json")
    shutil.copy(GLOVE, root / "glove.txt.gz")
    _same_shapes(root / "same_shapes.json")
    return root


def _local() -> dict:
    from distrain.config.loading import load_config

    config = load_config(CONFIGS / "qanet.jsonnet")
    config["train_data_path"] = config["validation_data_path"] = "short_squad.json"
    config["vocabulary"]["pretrained_files"]["tokens"] = "glove.txt.gz"
    config["model"]["text_field_embedder"]["token_embedders"]["tokens"]["pretrained_file"] = "glove.txt.gz"
    return config


def test_qanet_config_passes_check_and_trains_an_epoch(workdir):
    run = check_and_train_an_epoch(workdir, _local(), "qanet", metric="validation_em")
    assert "moving_average" in (run / "config.json").read_text()


def test_a_config_naming_missing_components_is_one_line_per_name(workdir):
    config = _local()
    config["train_data_path"] = "missing.json"  # never read: the names are wrong first
    config["model"]["phrase_layer"]["type"] = "no_such_encoder"
    config["trainer"]["moving_average"]["type"] = "no_such_average"
    checked = run_cli("check", str(write_config(workdir / "missing.json.config", config)), cwd=workdir)
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    lines = [line for line in checked.stderr.splitlines() if "no_such" in line]
    assert len(lines) == 2
    assert any(line.lstrip().startswith("model.phrase_layer.type") for line in lines)
    assert any(line.lstrip().startswith("trainer.moving_average.type") for line in lines)


def test_a_matrix_attention_wider_than_the_phrase_layer_is_named_before_data_is_read(workdir):
    config = _local()
    config["train_data_path"] = "missing.json"  # never read: the widths are wrong first
    config["model"]["matrix_attention_layer"]["tensor_1_dim"] = 100
    checked = run_cli("check", str(write_config(workdir / "wide.json", config)), cwd=workdir)
    assert checked.returncode == 2
    assert "model.matrix_attention_layer.tensor_1_dim: is 100, but the phrase_layer gives 128" in checked.stderr


def _same_shapes(path: Path) -> Path:
    """One fixture paragraph and four questions whose words are one set in four orders: QANet's convolutions read
    padding (AllenNLP's do too), so its outputs depend on how far a batch is padded, and equal shapes keep a
    worker's slice padded as the whole global batch is."""
    context = json.loads(SQUAD.read_text())["data"][0]["paragraphs"][1]["context"]
    words = "what did albert zahm build in 1882".split()
    answers = ["1882", "an early wind tunnel", "Father Julius Nieuwland", "neoprene"]
    questions = [{"id": f"q{i}", "question": " ".join(words[i:] + words[:i]),
                  "answers": [{"text": text, "answer_start": context.index(text)}]} for i, text in enumerate(answers)]
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": context, "qas": questions}]}]}))
    return path


def _small_qanet(workers: int) -> dict:
    """The golden fixture's tiny QANet (dropout and layer dropout off) and its moving average: 3 epochs of global
    batches of 2 questions (the loader's batch size is each worker's). Plain SGD, not the fixture's Adam: some
    gradients are zero in exact arithmetic (the keys' bias and the similarity's bias, which a softmax does not
    see) and rounding noise there, different for 1 and 2 workers, would become Adam steps of the full rate."""
    config = json.loads((MODELS / "test_fixtures" / "rc" / "qanet" / "experiment.json").read_text())
    config["train_data_path"] = config["validation_data_path"] = "same_shapes.json"
    config["data_loader"] = {"batch_size": 2 // workers}
    config["trainer"] |= {"num_epochs": 3, "cuda_device": None, "optimizer": {"type": "sgd", "lr": 0.5}}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


def test_two_workers_end_within_1e_5_of_one_worker(workdir):
    runs = train_on_one_and_two_workers(workdir, _small_qanet)
    assert max_weight_difference(runs[1], runs[2]) <= 1e-5
    assert final_metrics(runs[1])["validation_f1"] == pytest.approx(final_metrics(runs[2])["validation_f1"], abs=1e-9)


def test_a_run_resumed_with_its_moving_average_ends_where_an_uninterrupted_run_does(workdir):
    """The checkpoint keeps the trained weights and the averages apart: a run stopped after epoch 1 and resumed
    for a second ends with the uninterrupted run's archive (the averages) and validation metrics."""
    config = write_config(workdir / "resume.json", _small_qanet(1) | {"validation_data_path": "squad.json"})
    whole = run_cli("train", str(config), "-s", "runs/whole", "-f", "-o", '{"trainer.num_epochs": 2}', cwd=workdir)
    assert whole.returncode == 0, whole.stderr
    first = run_cli("train", str(config), "-s", "runs/resumed", "-f", "-o", '{"trainer.num_epochs": 1}', cwd=workdir)
    assert first.returncode == 0, first.stderr
    resumed = run_cli("train", str(config), "-s", "runs/resumed", "--recover", "-o", '{"trainer.num_epochs": 2}',
                      cwd=workdir)
    assert resumed.returncode == 0, resumed.stderr
    assert max_weight_difference(workdir / "runs" / "whole", workdir / "runs" / "resumed") == 0
    whole_metrics, resumed_metrics = final_metrics(workdir / "runs" / "whole"), final_metrics(workdir / "runs" / "resumed")
    assert {k: v for k, v in resumed_metrics.items() if k.startswith("validation_")} == {
        k: v for k, v in whole_metrics.items() if k.startswith("validation_")}
