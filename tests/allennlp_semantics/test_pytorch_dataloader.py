"""AllenNLP 1.x's ``data_loader: {type: "pytorch_dataloader", ...}`` (and 2.x's ``multiprocess``) is distrain's
loader with AllenNLP's keys and defaults: ``batch_size`` 1 and ``shuffle`` false unless given, ``sampler``
``random``/``sequential`` as ``shuffle``, torch's ``pin_memory``/``timeout``/``multiprocessing_context`` accepted."""

from __future__ import annotations

import json

from distrain.experiment.plan import resolve_experiment
from distrain.plugins import import_builtins
from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl


def data(folder):
    return {"train": write_jsonl(folder / "train.jsonl", sentiment_records(24, 1)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(8, 2))}


def loader(tmp_path, block: dict):
    import_builtins()
    return resolve_experiment(text_config(data(tmp_path)) | {"data_loader": block}).build().data_loader


def test_pytorch_dataloader_takes_allennlps_defaults_and_keys(tmp_path):
    bare = loader(tmp_path, {"type": "pytorch_dataloader"})
    assert (bare.batch_size, bare.shuffle) == (1, False)
    given = loader(tmp_path, {"type": "pytorch_dataloader", "batch_size": 4, "sampler": {"type": "random"},
                              "num_workers": 0, "pin_memory": True, "drop_last": True, "timeout": 0,
                              "multiprocessing_context": "spawn"})
    assert (given.batch_size, given.shuffle, given.drop_last) == (4, True, True)
    bucketed = loader(tmp_path, {"type": "multiprocess", "batch_sampler": {"type": "bucket", "batch_size": 3}})
    assert bucketed.batch_size == 3
    assert loader(tmp_path, {"batch_size": 2}).shuffle  # without a type: distrain's default


def test_a_pytorch_dataloader_config_trains_and_a_contradiction_is_one_line(tmp_path):
    config = text_config(data(tmp_path)) | {"data_loader": {"type": "pytorch_dataloader", "batch_size": 8,
                                                             "shuffle": True}}
    trained = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", "run", cwd=tmp_path)
    assert trained.returncode == 0, trained.stderr
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["epoch"] == 1
    config["data_loader"] |= {"sampler": "sequential"}
    checked = run_cli("check", str(write_config(tmp_path / "bad.json", config)), cwd=tmp_path)
    assert checked.returncode == 2
    assert checked.stderr.strip().splitlines()[-1].endswith(
        'data_loader.sampler: "sequential" contradicts shuffle: true; keep one'), checked.stderr
