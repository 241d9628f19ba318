"""An archive carries the tokenizers and model configs its config names (``pretrained/``, no weights), so
``distrain predict`` runs from the archive alone: a causal LM fine-tuned from a local Llama folder, and a
transformer classifier over a local BERT folder, predict the same after their folders are gone; a damaged
tokenizer in the archive is a one-line error naming the archive; an archive without ``pretrained/`` (as
written before it existed) still loads from the names it was trained with."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import sentiment_records, write_jsonl
from support.transformer_fixtures import write_corpus, write_tiny_bert, write_tiny_llama

PROMPTS = ["the cat", "a dog ran to the", "she saw"]


def members(archive: Path) -> list[str]:
    with tarfile.open(archive) as tar:
        return tar.getnames()


def predict(archive: Path, data: Path, output: Path) -> list[dict]:
    result = run_cli("predict", str(archive), str(data), "--output-file", str(output))
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in output.read_text().splitlines()]


@pytest.fixture(scope="module")
def llama_run(tmp_path_factory) -> dict:
    """A Llama fine-tuned from a local folder (one epoch of packed text), with its completions predicted
    while the folder was there; then the folder is moved away."""
    root = tmp_path_factory.mktemp("archive_offline")
    folder = write_tiny_llama(root / "llama")
    config = {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": str(folder), "sequence_length": 16},
        "train_data_path": str(write_corpus(root / "corpus", files=1, sentences=40, seed=3)),
        "model": {"type": "causal_language_model", "model_name": str(folder), "generation": {"max_new_tokens": 6}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 0.01}, "progress_bar": False},
    }
    result = run_cli("train", str(write_config(root / "config.json", config)), "-s", str(root / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    archive = root / "run" / "model.tar.gz"
    prompts = write_jsonl(root / "prompts.jsonl", [{"prompt": prompt} for prompt in PROMPTS])
    before = predict(archive, prompts, root / "before.jsonl")
    shutil.move(folder, root / "moved_away")
    return {"root": root, "archive": archive, "prompts": prompts, "before": before, "folder": folder}


def test_a_causal_lm_predicts_from_its_archive_after_its_folder_is_gone(llama_run, tmp_path):
    names = members(llama_run["archive"])
    assert {"pretrained/index.json", "pretrained/0/config.json", "pretrained/0/tokenizer_config.json"} <= set(names)
    assert not [name for name in names if name.startswith("pretrained/") and name.endswith((".safetensors", ".bin"))]
    assert not llama_run["folder"].exists()
    after = predict(llama_run["archive"], llama_run["prompts"], tmp_path / "after.jsonl")
    assert after == llama_run["before"] and all(record["tokens"] > 0 for record in after)


def rewritten(archive: Path, target: Path, change: dict[str, bytes | None]) -> Path:
    """A copy of ``archive`` with members replaced (bytes) or left out (None)."""
    with tarfile.open(archive) as source, tarfile.open(target, "w:gz") as copy:
        for member in source.getmembers():
            if member.name in change and change[member.name] is None:
                continue
            data = change.get(member.name)
            if data is None:
                copy.addfile(member, source.extractfile(member) if member.isfile() else None)
            else:
                member.size = len(data)
                copy.addfile(member, io.BytesIO(data))
    return target


def test_a_damaged_or_missing_tokenizer_in_the_archive_is_one_line_naming_it(llama_run, tmp_path):
    tokenizer_files = [name for name in members(llama_run["archive"])
                       if name.startswith("pretrained/0/") and name.rpartition("/")[2].startswith("tokenizer")]
    assert sorted(tokenizer_files) == ["pretrained/0/tokenizer.json", "pretrained/0/tokenizer_config.json"]
    damaged = rewritten(llama_run["archive"], tmp_path / "damaged.tar.gz", {"pretrained/0/tokenizer.json": b"{ not"})
    output = tmp_path / "damaged.jsonl"
    result = run_cli("predict", str(damaged), str(llama_run["prompts"]), "--output-file", str(output))
    assert result.returncode == 2 and not output.exists(), result.stderr[-2000:]
    assert result.stderr.strip() == (f"error: {damaged}: pretrained/0 (for {llama_run['folder']}): the tokenizer cannot "
                                     "be loaded (Expecting property name enclosed in double quotes: line 1 column 3 "
                                     "(char 2))")
    from distrain.experiment.archive.format import ArchiveError, load_archive

    missing = rewritten(llama_run["archive"], tmp_path / "missing.tar.gz", {name: None for name in tokenizer_files})
    with pytest.raises(ArchiveError) as error:
        load_archive(missing)
    assert str(error.value) == (f"{missing}: pretrained/0 (for {llama_run['folder']}): the tokenizer cannot be loaded "
                                "(no tokenizer_config.json)")


def test_an_archive_without_pretrained_files_loads_from_the_names_it_was_trained_with(llama_run, tmp_path):
    """Archives written before ``pretrained/`` existed: the config's names are read as in training. The
    model such an archive gives (built by from_pretrained, then the archive's weights) is the one the
    carried config builds with no weights read or initialised: every parameter and buffer, and the logits."""
    import torch

    from distrain.config.errors import ConfigError
    from distrain.experiment.archive.format import load_archive

    old = rewritten(llama_run["archive"], tmp_path / "old.tar.gz",
                    {name: None for name in members(llama_run["archive"]) if name.startswith("pretrained")})
    with pytest.raises(ConfigError, match="model.model_name: pretrained model not found"):
        load_archive(old)  # its folder is gone, and nothing in the archive replaces it
    shutil.copytree(llama_run["root"] / "moved_away", llama_run["folder"])
    try:
        loaded = load_archive(old)
        assert loaded.config["model"]["model_name"] == str(llama_run["folder"])
    finally:
        shutil.rmtree(llama_run["folder"])
    carried = load_archive(llama_run["archive"]).model
    assert carried.tokenizer_name != str(llama_run["folder"])
    expected = dict(loaded.model.named_buffers()) | dict(loaded.model.named_parameters())
    found = dict(carried.named_buffers()) | dict(carried.named_parameters())
    assert sorted(found) == sorted(expected) and len(found) > len(dict(carried.named_parameters()))
    assert all(torch.equal(found[name], expected[name]) for name in expected)
    tokens = torch.tensor([[5, 6, 7, 8, 9]])
    with torch.no_grad():
        assert torch.equal(carried(tokens)["logits"], loaded.model(tokens)["logits"])


def test_a_transformer_classifier_predicts_from_its_archive_after_its_folder_is_gone(tmp_path):
    import torch
    from transformers import AutoConfig, AutoModel

    folder = write_tiny_bert(tmp_path / "bert")
    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    data = write_jsonl(tmp_path / "train.jsonl", sentiment_records(32))
    config = {
        "dataset_reader": {"type": "text_classification_json", "tokenizer": {
            "type": "pretrained_transformer", "model_name": str(folder), "max_length": 32}},
        "train_data_path": str(data),
        "model": {"type": "transformer_classifier", "model_name": str(folder), "dropout": 0.0},
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adam", "lr": 0.001}, "progress_bar": False},
    }
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr[-3000:]
    archive = tmp_path / "run" / "model.tar.gz"
    from distrain.data.loader import DataLoader
    from distrain.distributed.world import SINGLE
    from distrain.experiment.archive.jobs import load_job
    from distrain.training.evaluation import predict as predict_in_process

    def predictions() -> list[dict]:
        job = load_job(str(archive), str(data), {}, predicting=True)
        return predict_in_process(job.model, DataLoader(job.dataset, job.loader, SINGLE), "cpu")

    before = predictions()
    shutil.rmtree(folder)
    assert predictions() == before


def test_a_model_whose_weights_come_from_the_archive_keeps_its_output_layer_tied():
    """Built for an archive (no weights initialised), a causal LM with tied embeddings still ties them:
    the archive stores the tied weight once, so an untied output layer would be left unloaded."""
    from distrain.data.vocabulary import Vocabulary
    from distrain.models.causal_language_model import CausalLanguageModel
    from distrain.pretrained import weights_elsewhere

    settings = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 50, "tie_word_embeddings": True}
    with weights_elsewhere():
        model = CausalLanguageModel(Vocabulary(), config=settings)
    assert model.transformer.get_output_embeddings().weight is model.transformer.get_input_embeddings().weight
