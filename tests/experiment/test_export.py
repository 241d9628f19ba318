"""``distrain export ARCHIVE OUT --format hf``: folders that plain transformers (and peft) load in a fresh
process that never imports distrain give distrain's logits (within 1e-5) for a classifier, a masked LM, a causal
LM, a merged LoRA classifier and masked LM, and an unmerged LoRA causal LM (a PEFT adapter folder on its base);
``transformers.pipeline("text-classification")`` gives the labels ``distrain predict`` gives. Refused, in one
line with nothing written: a non-empty OUT without --force, a model with no transformers equivalent, a LoRA
classifier as a PEFT folder (its head is distrain's own)."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from support.cli import run_cli
from support.data import sentiment_records, write_jsonl
from support.transformer_fixtures import write_tiny_bert, write_tiny_llama

LABELS = ["pos", "neg"]
IDS = [[2, 7, 9, 11, 30, 41, 6, 3], [2, 12, 33, 8, 8, 40, 5, 3]]  # [CLS] ... [SEP] of the tiny vocabulary

#: runs in a fresh interpreter: loads each folder with plain transformers / peft, prints its logits
# run with ``python -S``: the environment's site-packages is put on the path by hand, so no .pth line runs (the set-up's
# ``import allennlp`` hook is one, and it imports distrain's hook module at every start)
LOADER = r"""
import json, sys
sys.path.append(sys.argv[4])  # the environment's site-packages, as the test's own process finds it
import torch, transformers
from peft import PeftModel
jobs, ids = json.loads(sys.argv[1]), torch.tensor(json.loads(sys.argv[2]))
out = {}
for name, (auto_class, folder) in jobs.items():
    if auto_class == "peft":
        base = json.load(open(folder + "/adapter_config.json"))["base_model_name_or_path"]
        model = PeftModel.from_pretrained(transformers.AutoModelForCausalLM.from_pretrained(base), folder)
    else:
        model = getattr(transformers, auto_class).from_pretrained(folder)
    with torch.no_grad():
        out[name] = model.eval()(input_ids=ids).logits.tolist()
texts = json.loads(sys.argv[3])
classify = transformers.pipeline("text-classification", model=jobs["classifier"][1])
out["pipeline"] = [[result["label"], result["score"]] for result in classify(texts)]
assert not any(module.startswith("distrain") for module in sys.modules)
print(json.dumps(out))
"""


def write_pretrained_bert(folder: Path) -> Path:
    import torch
    from transformers import AutoConfig, AutoModel

    write_tiny_bert(folder)
    torch.manual_seed(0)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    return folder


def build_archive(run: Path, config: dict, labels: list[str] | None = None, words: list[str] = ()) -> Path:
    """An archive of ``config``'s model as built, every trainable weight moved off its start (so a LoRA
    adapter is not zero): export reads archives; how they were trained does not matter to it."""
    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.experiment.archive.format import base_reference, write_archive
    from distrain.experiment.archive.pretrained_files import pretrained_references
    from distrain.experiment.plan import resolve_experiment
    from distrain.training.checkpointing import trained_state

    resolved = resolve_experiment(config)
    vocab = Vocabulary({**({"labels": labels} if labels else {}), **({"tokens": ["@@PADDING@@", *words]} if words else {})})
    torch.manual_seed(1)
    model = resolved.build().model.construct(vocab=vocab)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if parameter.requires_grad:  # the head far enough to tell its labels apart
                parameter.add_(torch.randn_like(parameter) * (0.05 if ".lora_" in name else 0.5))
    run.mkdir(parents=True)
    return write_archive(run, trained_state(model, model.state_dict()), vocab, config,
                         list(pretrained_references(resolved.plan)), adapter_base=base_reference(model))


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict:
    from distrain.plugins import import_builtins

    import_builtins()
    root = tmp_path_factory.mktemp("export")
    bert, llama = write_pretrained_bert(root / "bert"), write_tiny_llama(root / "llama")
    data = write_jsonl(root / "reviews.jsonl", sentiment_records(12))
    classifier_reader = {"type": "text_classification_json", "tokenizer": {
        "type": "pretrained_transformer", "model_name": str(bert), "max_length": 32}}
    classifier = {"type": "transformer_classifier", "model_name": str(bert), "dropout": 0.0}
    lora = {"type": "lora", "r": 4, "alpha": 8}
    text = {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 32}
    packed = {"type": "packed_text", "tokenizer_name": str(llama), "sequence_length": 16}
    configs = {
        "classifier": ({"dataset_reader": classifier_reader, "model": classifier}, LABELS),
        "lora_classifier": ({"dataset_reader": classifier_reader, "model": {**classifier, "adapter": lora}}, LABELS),
        "masked_lm": ({"dataset_reader": text, "model": {"type": "transformer_masked_language_model", "tokenizer_name": str(bert),
                                                         "model_name": str(bert)}}, None),
        "lora_masked_lm": ({"dataset_reader": text, "model": {"type": "transformer_masked_language_model", "adapter": lora,
                                                              "tokenizer_name": str(bert), "model_name": str(bert)}},
                           None),
        "causal_lm": ({"dataset_reader": packed, "model": {"type": "causal_language_model", "model_name": str(llama)}},
                      None),
        "lora_causal_lm": ({"dataset_reader": packed, "model": {"type": "causal_language_model",
                                                                "model_name": str(llama), "adapter": lora}}, None),
    }
    built = {name: build_archive(root / name, {**config, "train_data_path": str(data)}, labels)
             for name, (config, labels) in configs.items()}
    return {"root": root, "data": data, **built}


def distrain_logits(archive: Path, ids) -> "torch.Tensor":
    import torch

    from distrain.experiment.archive.format import load_archive

    model = load_archive(archive).model
    tokens = torch.tensor(ids)
    with torch.no_grad():
        if type(model).__name__ == "TransformerClassifier":
            return model(tokens=tokens)["logits"]
        if type(model).__name__ == "CausalLanguageModel":
            return model(input_ids=tokens)["logits"]
        states = model.transform(model.encoder(tokens, tokens.ne(model.pad_token_id)))  # the MLM head, everywhere
        return torch.nn.functional.linear(states, model.encoder.transformer.get_input_embeddings().weight,
                                          model.output_bias)


def test_exported_folders_give_distrains_logits_in_a_process_without_distrain(archives):
    import torch

    from distrain.data.loader import DataLoader
    from distrain.distributed.world import SINGLE
    from distrain.experiment.archive.export import export_archive
    from distrain.experiment.archive.jobs import load_job
    from distrain.training.evaluation import predict

    out = archives["root"] / "exported"
    result = run_cli("export", str(archives["classifier"]), str(out / "classifier"), "--format", "hf")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "wrote a BertForSequenceClassification folder" in result.stdout
    config = json.loads((out / "classifier" / "config.json").read_text())
    assert config["id2label"] == {"0": "pos", "1": "neg"} and config["label2id"] == {"pos": 0, "neg": 1}
    assert (out / "classifier" / "model.safetensors").is_file() and (out / "classifier" / "tokenizer.json").is_file()
    export_archive(archives["lora_classifier"], out / "lora_classifier", merge_adapters=True)
    export_archive(archives["masked_lm"], out / "masked_lm")
    export_archive(archives["lora_masked_lm"], out / "lora_masked_lm", merge_adapters=True)
    export_archive(archives["causal_lm"], out / "causal_lm")
    export_archive(archives["lora_causal_lm"], out / "lora_causal_lm")  # unmerged: a PEFT adapter folder
    assert sorted(p.name for p in (out / "lora_causal_lm").iterdir() if p.suffix in (".json", ".safetensors")) == [
        "adapter_config.json", "adapter_model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    jobs = {"classifier": ("AutoModelForSequenceClassification", str(out / "classifier")),
            "lora_classifier": ("AutoModelForSequenceClassification", str(out / "lora_classifier")),
            "masked_lm": ("AutoModelForMaskedLM", str(out / "masked_lm")),
            "lora_masked_lm": ("AutoModelForMaskedLM", str(out / "lora_masked_lm")),
            "causal_lm": ("AutoModelForCausalLM", str(out / "causal_lm")),
            "lora_causal_lm": ("peft", str(out / "lora_causal_lm"))}
    texts = [json.loads(line)["text"] for line in archives["data"].read_text().splitlines()]
    site_packages = sysconfig.get_paths()["purelib"]  # -S: no .pth line runs, the set-up's import hook's included
    loaded = subprocess.run([sys.executable, "-S", "-c", LOADER, json.dumps(jobs), json.dumps(IDS), json.dumps(texts),
                             site_packages],
                            capture_output=True, text=True, timeout=300, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin"})
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    found = json.loads(loaded.stdout.strip().splitlines()[-1])
    for name in jobs:
        expected = distrain_logits(archives[name], IDS)
        difference = float((torch.tensor(found[name]) - expected).abs().max())
        assert difference <= 1e-5, (name, difference)
    job = load_job(str(archives["classifier"]), str(archives["data"]), {}, predicting=True)
    records = predict(job.model, DataLoader(job.dataset, job.loader, SINGLE), "cpu")
    assert [label for label, _ in found["pipeline"]] == [record["label"] for record in records]
    # an untrained encoder gives every text nearly one [CLS] vector (one label): the scores tell them apart
    assert [score for _, score in found["pipeline"]] == pytest.approx([max(r["probs"]) for r in records], abs=2e-6)
    assert len({round(score, 5) for _, score in found["pipeline"]}) > 1


def test_exports_that_cannot_be_done_are_refused_in_one_line_with_nothing_written(archives, tmp_path):
    from distrain.errors import NotExportable
    from distrain.experiment.archive.export import export_archive

    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    result = run_cli("export", str(archives["classifier"]), str(occupied))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {occupied}: exists and is not empty; give --force to replace it"]
    assert [p.name for p in tmp_path.iterdir()] == ["occupied"] and (occupied / "keep.txt").read_text() == "mine"
    refusal = (r"^TransformerClassifier trains a head of distrain's own \(output.weight, output.bias\), which a PEFT "
               r"adapter cannot carry; export with --merge-adapters$")
    with pytest.raises(NotExportable, match=refusal):
        export_archive(archives["lora_classifier"], tmp_path / "peft")
    run = build_archive(tmp_path / "basic", {"dataset_reader": {"type": "text_classification_json"},
                                             "train_data_path": str(archives["data"]),
                                             "model": {"type": "basic_classifier", "embedding_dim": 4,
                                                       "encoder": {"type": "boe"}}}, LABELS, ["good", "bad"])
    with pytest.raises(NotExportable, match="^BasicClassifier has no transformers equivalent: it is built from "
                                            "distrain's own modules"):
        export_archive(run, tmp_path / "basic_hf")
    export_archive(archives["classifier"], occupied, force=True)  # --force replaces it, whole
    assert not (occupied / "keep.txt").exists() and (occupied / "config.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["basic", "occupied"]
