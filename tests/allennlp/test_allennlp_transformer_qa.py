"""allennlp-models' ``rc/transformer_qa.jsonnet`` (tests/allennlp_configs/transformer_qa.jsonnet: only its data paths
and pretrained name changed) passes ``distrain check`` and trains on small SQuAD v1.1-format data on 2 CPU workers,
as it is and with the multi-GPU tutorial's sharded form of its reader. ``trainer.num_epochs`` is overridden to 1
(the config's 5 epochs would only take longer); its batch size of 16 per worker stays."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.allennlp import assert_evaluate_gives
from support.cli import run_cli
from support.paths import TESTS
from support.squad import squad_questions, write_squad
from distrain.config.loading import load_config

CONFIGS = TESTS / "allennlp_configs"
ONE_EPOCH = ("-o", '{"trainer.num_epochs": 1}')


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """The data at the config's relative paths, and the same questions as 2 shard files per split."""
    root = tmp_path_factory.mktemp("allennlp_qa")
    train, dev = squad_questions(8, seed=1, filler=2), squad_questions(4, seed=2, filler=2, start=100)
    write_squad(root / "squad" / "train-v1.1.json", train)
    write_squad(root / "squad" / "dev-v1.1.json", dev)
    for name, paragraphs in (("train", train), ("dev", dev)):
        for shard in range(2):
            write_squad(root / "squad" / f"{name}-shards" / f"{name}-{shard}.json", paragraphs[shard::2])
    shutil.copy(CONFIGS / "transformer_qa.jsonnet", root / "transformer_qa.jsonnet")
    return root


def distributed(workdir: Path, sharded: bool) -> Path:
    config = load_config(workdir / "transformer_qa.jsonnet") | {"distributed": {"cuda_devices": [-1, -1]}}
    if sharded:  # the tutorial's form: the same reader, dealt whole shard files
        config["dataset_reader"] = {"type": "sharded", "base_reader": config["dataset_reader"]}
        config["train_data_path"] = "squad/train-shards/*.json"
        config["validation_data_path"] = "squad/dev-shards/*.json"
    path = workdir / f"transformer_qa_{'sharded' if sharded else 'plain'}.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize("sharded", [False, True], ids=["as_it_is", "sharded_base_reader"])
def test_transformer_qa_config_passes_check_and_trains_on_two_cpu_workers(workdir, sharded):
    path = distributed(workdir, sharded)
    checked = run_cli("check", str(path), cwd=workdir)
    assert checked.returncode == 0, checked.stderr
    out = workdir / "runs" / path.stem
    trained = run_cli("train", str(path), "-s", str(out), *ONE_EPOCH, cwd=workdir)
    assert trained.returncode == 0, trained.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["epoch"] == 0 and 0 <= metrics["validation_per_instance_f1"] <= 1
    assert_evaluate_gives(out, json.loads(path.read_text())["validation_data_path"], "validation_per_instance_f1",
                          metrics["validation_per_instance_f1"], workdir)
    assert (out / "model.tar.gz").exists() and (out / "out_worker1.log").exists()
