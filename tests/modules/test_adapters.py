"""LoRA adapters (``model.adapter``, through peft) on a tiny pretrained BERT classifier: only the adapter and
the head train and are saved (checkpoints and archive), the archive names its base folder and the sha256 of
its weights, ``evaluate``/``predict`` run from it while the base is there and refuse it, in one line, when the
base moved or its weights changed; bad adapter configs are reported with their key path before data is read."""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import sentiment_records, write_jsonl
from support.transformer_fixtures import write_tiny_bert


def write_pretrained_bert(folder: Path, seed: int = 0) -> Path:
    import torch
    from transformers import AutoConfig, AutoModel

    write_tiny_bert(folder)
    torch.manual_seed(seed)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    return folder


def classifier_config(folder: Path, data: Path, adapter: dict | None = None) -> dict:
    model = {"type": "transformer_classifier", "model_name": str(folder), "dropout": 0.0}
    if adapter is not None:
        model["adapter"] = adapter
    return {
        "dataset_reader": {"type": "text_classification_json", "tokenizer": {
            "type": "pretrained_transformer", "model_name": str(folder), "max_length": 32}},
        "train_data_path": str(data),
        "validation_data_path": str(data),
        "model": model,
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False},
    }


def weight_names(safetensors_file: Path) -> list[str]:
    from safetensors import safe_open

    with safe_open(str(safetensors_file), "pt") as handle:
        return list(handle.keys())


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory) -> dict:
    """A LoRA classifier trained two epochs over a pretrained tiny BERT folder, with ``use_amp`` (bfloat16
    autocast): the frozen base stays float32 and untouched, the adapters learn."""
    root = tmp_path_factory.mktemp("adapters")
    folder = write_pretrained_bert(root / "bert")
    data = write_jsonl(root / "train.jsonl", sentiment_records(32))
    config = classifier_config(folder, data, {"type": "lora", "r": 4, "alpha": 8})
    config["trainer"]["use_amp"] = True
    run = root / "run"
    result = run_cli("train", str(write_config(root / "config.json", config)), "-s", str(run))
    assert result.returncode == 0, result.stderr[-3000:]
    return {"root": root, "folder": folder, "data": data, "run": run, "archive": run / "model.tar.gz",
            "config": config}


def test_only_the_adapter_and_the_head_train_and_are_saved(lora_run):
    import torch
    from safetensors.torch import load_file

    from distrain.experiment.archive.format import extract_archive, load_archive

    trained = ["lora_A", "lora_B", "output."]
    checkpoints = sorted(p for p in (lora_run["run"] / "checkpoints").iterdir() if p.is_dir())
    for weights in [lora_run["run"] / "checkpoints" / "best.safetensors", checkpoints[-1] / "model.safetensors"]:
        names = weight_names(weights)
        assert names and all(any(part in name for part in trained) for name in names), names
    extracted = extract_archive(lora_run["archive"], lora_run["root"] / "extracted")
    names = weight_names(extracted / "weights.safetensors")
    # 2 layers x 6 projections x (A, B) + the output layer's weight and bias
    assert len(names) == 2 * 6 * 2 + 2 and all(any(part in name for part in trained) for name in names)
    meta = json.loads((extracted / "meta.json").read_text())
    assert meta["adapter_base"]["name"] == str(lora_run["folder"])
    assert len(meta["adapter_base"]["sha256"]) == 64
    # the frozen base is the pretrained folder's, untouched; the adapters moved away from zero
    model = load_archive(lora_run["archive"]).model
    base = load_file(str(lora_run["folder"] / "model.safetensors"))
    state = model.state_dict()
    query = "encoder.layer.0.attention.self.query.weight"
    assert torch.equal(state[f"encoder.transformer.{query.replace('weight', 'base_layer.weight')}"], base[query])
    assert state["encoder.transformer.encoder.layer.0.attention.self.query.lora_B.default.weight"].abs().sum() > 0
    assert {name for name, p in model.named_parameters() if p.requires_grad} == set(names)


def test_check_prints_trainable_and_total_parameters_and_the_state_each_rank_holds(lora_run):
    result = run_cli("check", str(lora_run["root"] / "config.json"))
    assert result.returncode == 0, result.stderr[-3000:]
    # 2 layers x (4 attention projections 64->64 + 64->128 + 128->64) at r 4, and the 64->2 output layer
    trainable = 2 * (4 * (64 * 4 + 4 * 64) + 2 * (4 * 64 + 128 * 4)) + 64 * 2 + 2
    model_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("model "))
    assert model_line.endswith(f"parameters ({trainable:,} trainable)"), model_line
    total = int(re.search(r": ([\d,]+) parameters", model_line).group(1).replace(",", ""))
    assert "rank 0 holds     parameters" in result.stdout and "optimizer state" in result.stdout
    # the dry run at another size (rank 0 on the meta device, the pretrained base built from its config)
    fsdp = json.dumps({"distributed": {"cuda_devices": [-1, -1], "strategy": {"type": "fsdp"}}})
    result = run_cli("check", str(lora_run["root"] / "config.json"), "--world-size", "4", "-o", fsdp)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"FSDPTransformerClassifier: {total:,} parameters ({trainable:,} trainable)" in result.stdout
    # Adam's two float32 moments of each rank's quarter of what trains (+ step counts)
    optimizer = re.search(r"optimizer +[\d.]+ [KM]iB \(([\d,]+) B\)", result.stdout)
    assert optimizer and 2 * 4 * trainable // 4 <= int(optimizer.group(1).replace(",", "")) < 2 * 4 * trainable // 3


def test_evaluate_predict_and_serve_run_from_the_adapter_archive(lora_run):
    from distrain.data.loader import DataLoader
    from distrain.distributed.world import SINGLE
    from distrain.experiment.archive.jobs import load_job
    from distrain.training.evaluation import predict

    metrics_file = lora_run["root"] / "metrics.json"
    result = run_cli("evaluate", str(lora_run["archive"]), str(lora_run["data"]), "--output-file", str(metrics_file))
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads(metrics_file.read_text())
    trained = json.loads((lora_run["run"] / "metrics.json").read_text())
    assert metrics["accuracy"] == pytest.approx(trained["best_validation_accuracy"])
    job = load_job(str(lora_run["archive"]), str(lora_run["data"]), {}, predicting=True)  # as predict and serve do
    records = predict(job.model, DataLoader(job.dataset, job.loader, SINGLE), "cpu")
    labels = [json.loads(line)["label"] for line in lora_run["data"].read_text().splitlines()]
    correct = sum(record["label"] == label for record, label in zip(records, labels))
    assert len(records) == 32 and correct / 32 == pytest.approx(metrics["accuracy"])
    from distrain.serving.predictor import Predictor  # what distrain serve runs

    predictor = Predictor.from_archive(str(lora_run["archive"]))
    texts = [json.loads(line)["text"] for line in lora_run["data"].read_text().splitlines()[:4]]
    served = predictor.predict([predictor.prepare({"text": text}) for text in texts])
    assert [record["label"] for record in served] == [record["label"] for record in records[:4]]


def test_a_base_that_moved_or_changed_is_a_one_line_error_for_archives_and_checkpoints(lora_run, tmp_path):
    from safetensors.torch import load_file, save_file

    from distrain.experiment.archive.format import ArchiveError, load_archive

    folder, archive = lora_run["folder"], lora_run["archive"]
    weights = folder / "model.safetensors"
    original = weights.read_bytes()
    try:
        changed = load_file(str(weights))
        changed["encoder.layer.0.attention.self.query.weight"] += 1e-3
        save_file(changed, str(weights), metadata={"format": "pt"})
        with pytest.raises(ArchiveError, match=f"^{archive}: the adapter's base model {folder} has other weights than "
                                               r"it was trained on \(sha256 [0-9a-f]{16}…, expected [0-9a-f]{16}…\)$"):
            load_archive(archive)  # what evaluate, predict and serve load
        # the checkpoints leave the base out too: resuming on other base weights is refused, nothing written
        before = sorted(path.name for path in (lora_run["run"] / "checkpoints").iterdir())
        result = run_cli("train", str(lora_run["root"] / "config.json"), "-s", str(lora_run["run"]), "--recover")
        assert result.returncode == 2
        errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and f"the adapter's base model {folder} has other weights than the checkpoint was " \
                                    "trained on" in errors[0], errors
        assert sorted(path.name for path in (lora_run["run"] / "checkpoints").iterdir()) == before
        weights.rename(tmp_path / "moved.safetensors")
        with pytest.raises(ArchiveError, match=f"^{archive}: the adapter's base model {folder} is not found "):
            load_archive(archive)
    finally:
        weights.write_bytes(original)


def test_bad_adapter_configs_name_their_key_path_before_data_is_read(lora_run, tmp_path):
    from distrain.config.errors import ConfigError
    from distrain.experiment.plan import validate_experiment

    missing_data = tmp_path / "no-such-file.jsonl"  # a config error must come first
    config = classifier_config(lora_run["folder"], missing_data, {"type": "lora", "target_modules": ["q_proj", "query"]})
    result = run_cli("train", str(write_config(tmp_path / "targets.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: model.adapter.target_modules: 'q_proj' matches no linear layer of the model; its linear layers are "
        "named dense, key, query, value"]
    assert not (tmp_path / "run").exists()
    tensor_parallel = {**config, "distributed": {"cuda_devices": [-1, -1], "tensor_parallel_size": 2}}
    tensor_parallel["model"] = {**config["model"], "adapter": {"type": "lora"}}
    with pytest.raises(ConfigError) as raised:
        validate_experiment(tensor_parallel)
    assert [str(problem) for problem in raised.value.problems] == [
        "model.adapter: adapters cannot be split by tensor parallelism (peft's layers are not DTensor-aware); "
        "use fsdp or ddp"]
    config["model"] = {"type": "basic_classifier", "embedding_dim": 8, "encoder": {"type": "boe"},
                       "adapter": {"type": "lora"}}
    with pytest.raises(ConfigError) as raised:
        validate_experiment(config)
    assert [str(problem) for problem in raised.value.problems] == [
        "model.adapter: basic_classifier holds no transformers model to adapt; adapters apply to "
        "causal_language_model, transformer_classifier, transformer_masked_language_model"]
