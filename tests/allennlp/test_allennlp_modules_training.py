"""``dense_sparse_adam`` and ``multi_step`` against AllenNLP 2.10.1 (golden files made by
tests/allennlp_oracle/module_outputs.py), and a config using the new modules through the CLI."""

from __future__ import annotations

import json

import torch

from support.allennlp import check_and_train_an_epoch, sentences
from support.cli import run_cli
from support.configs import write_config
from support.paths import TESTS
from distrain.config.errors import Problem
from distrain.config.schema import resolve_object
from distrain.optim.optimizers import Optimizer
from distrain.optim.schedulers import LearningRateScheduler
from distrain.plugins import import_builtins

import_builtins()

GOLDEN = TESTS / "allennlp_golden" / "modules"


def golden(name: str):
    return json.loads((GOLDEN / f"{name}.json").read_text())["cases"]


def built(base: type, config: dict, **runtime):
    problems: list[Problem] = []
    node = resolve_object(base, config, "block", problems)
    assert not problems, problems
    return node.construct(**runtime)


def dense_sparse_adam_differences() -> list[float]:
    """Max |distrain's parameters - AllenNLP's| after each of the golden steps."""
    case = golden("dense_sparse_adam")
    embedding, linear = torch.nn.Embedding(10, 3, sparse=True), torch.nn.Linear(3, 2)
    model = torch.nn.ModuleDict({"embedding": embedding, "linear": linear})
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.copy_(torch.tensor(case["start"][name]["values"]))
    optimizer = built(Optimizer, case["config"], model_parameters=list(model.named_parameters()))
    differences = []
    for ids, expected in zip(case["batches"], case["after_each_step"]):
        optimizer.zero_grad()
        (linear(embedding(torch.tensor(ids))).sum(-1) ** 2).mean().backward()
        assert embedding.weight.grad.is_sparse
        optimizer.step()
        differences.append(max(float((parameter.detach() - torch.tensor(expected[name]["values"])).abs().max())
                               for name, parameter in model.named_parameters()))
    return differences


def test_dense_sparse_adam_takes_allennlps_steps_on_sparse_and_dense_gradients():
    assert max(dense_sparse_adam_differences()) < 1e-6


def test_multi_step_gives_allennlps_rate_after_each_epoch_whatever_the_batches():
    for case in golden("multi_step"):
        optimizer = torch.optim.SGD([{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr}
                                     for lr in case["base_lrs"]])
        scheduler = built(LearningRateScheduler, case["config"], optimizer=optimizer, num_training_steps=100)
        rates = [scheduler.get_lr()]
        for _ in range(len(case["rates_after_each_epoch"]) - 1):
            for _ in range(3):
                scheduler.step()  # batches do not move it
            scheduler.step_epoch(0.5)
            rates.append(scheduler.get_lr())
        # torch multiplies epoch by epoch, distrain takes the power: equal to the last bits
        assert torch.allclose(torch.tensor(rates, dtype=torch.float64),
                              torch.tensor(case["rates_after_each_epoch"], dtype=torch.float64), rtol=1e-12, atol=0)


def test_multi_step_resumes_at_the_epoch_it_saved():
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    config = {"type": "multi_step", "milestones": [1, 2], "gamma": 0.5}
    scheduler = built(LearningRateScheduler, config, optimizer=optimizer, num_training_steps=10)
    scheduler.step_epoch()
    resumed = built(LearningRateScheduler, config, optimizer=optimizer, num_training_steps=10)
    resumed.load_state_dict(scheduler.state_dict())
    resumed.step_epoch()
    assert resumed.get_lr() == [0.25]


def tagger_config(workdir, encoder: dict) -> dict:
    for name, seed in (("train", 1), ("dev", 2)):
        (workdir / f"{name}.jsonl").write_text("".join(
            json.dumps({"text": " ".join(words), "label": label}) + "\n" for words, label in sentences(12, seed)))
    return {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(workdir / "train.jsonl"),
        "validation_data_path": str(workdir / "dev.jsonl"),
        "model": {"type": "basic_classifier",
                  "text_field_embedder": {"token_embedders": {"tokens": {
                      "type": "embedding", "embedding_dim": 6, "sparse": True}}},
                  "seq2seq_encoder": encoder,
                  "seq2vec_encoder": {"type": "boe", "embedding_dim": 8, "averaged": True}},
        "data_loader": {"batch_size": 4, "shuffle": True},
        "trainer": {"num_epochs": 1, "progress_bar": False,
                    "optimizer": {"type": "dense_sparse_adam", "lr": 0.01},
                    "learning_rate_scheduler": {"type": "multi_step", "milestones": [1], "gamma": 0.5}},
    }


ENCODER = {"type": "stacked_bidirectional_lstm", "input_size": 6, "hidden_size": 4, "num_layers": 2,
           "recurrent_dropout_probability": 0.1, "layer_dropout_probability": 0.1}


def test_a_stacked_bidirectional_lstm_with_dense_sparse_adam_and_multi_step_checks_and_trains(tmp_path):
    check_and_train_an_epoch(tmp_path, tagger_config(tmp_path, ENCODER), "stacked")


def test_a_misspelt_argument_of_the_encoder_is_one_line_with_its_key_path(tmp_path):
    config = tagger_config(tmp_path, {**ENCODER, "use_higway": False})
    result = run_cli("train", str(write_config(tmp_path / "misspelt.json", config)), "-s", "runs/x", cwd=tmp_path)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: model.seq2seq_encoder.use_higway: "), result.stderr
    assert "use_highway" in lines[0]
