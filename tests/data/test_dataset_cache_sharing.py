"""The dataset cache is safe to share: concurrent runs build a cold entry once, damaged files are
rebuilt (never trained on), prune spares entries in use, and the streamed build writes exactly what
the in-memory build writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from support.cli import run_cli
from support.configs import text_config, write_config
from support.data import sentiment_records, write_jsonl
from support.distributed import archived_weights
from support.paths import PLUGINS, ROOT


def test_streamed_build_writes_the_same_bytes_as_the_in_memory_build(tmp_path):
    from distrain.data.dataset import IndexedDataset
    from distrain.data.dataset_writer import IndexedDatasetWriter
    from distrain.data.fields import LabelField, MetadataField, SequenceLabelField, TensorField, TextField, TokenIdsField
    from distrain.data.vocabulary import Vocabulary

    rng = np.random.default_rng(0)

    def instance(i: int) -> dict:
        words = [f"w{rng.integers(30)}" for _ in range(rng.integers(0, 7))]
        return {"tokens": TextField(words), "tags": SequenceLabelField(["A" if w < "w2" else "B" for w in words]),
                "ids": TokenIdsField(rng.integers(0, 99, size=rng.integers(1, 5)), pad_value=1),
                "label": LabelField(["x", "y", "z"][i % 3]), "features": TensorField(rng.normal(size=3)),
                "meta": MetadataField({"i": i})}

    instances = [instance(i) for i in range(23)]
    vocab = Vocabulary.from_instances(instances)
    IndexedDataset.from_instances(instances, vocab).save(tmp_path / "memory")
    writer = IndexedDatasetWriter(tmp_path / "streamed", vocab, chunk_size=4)
    for item in instances:
        writer.add(item)
    assert writer.close() == 23
    names = sorted(p.name for p in (tmp_path / "memory").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "streamed").iterdir())
    for name in names:
        assert (tmp_path / "memory" / name).read_bytes() == (tmp_path / "streamed" / name).read_bytes(), name


def test_cached_entry_equals_the_uncached_in_memory_dataset(tmp_path, monkeypatch):
    """prepare_data through the cache (streamed to disk) and without it give the same arrays."""
    from distrain.data.prepare import prepare_data
    from distrain.experiment.plan import resolve_experiment
    from distrain.plugins import import_plugins

    import_plugins()
    data = {"train": write_jsonl(tmp_path / "t.jsonl", sentiment_records(300, seed=3)),
            "validation": write_jsonl(tmp_path / "v.jsonl", sentiment_records(50, seed=4))}
    config = text_config(data)
    monkeypatch.setenv("DISTRAIN_CACHE", "off")
    memory = prepare_data(resolve_experiment(config).data_plan)
    monkeypatch.setenv("DISTRAIN_CACHE", str(tmp_path / "cache"))
    cached = prepare_data(resolve_experiment(config).data_plan)
    assert cached.train.source is not None and memory.train.source is None
    assert memory.vocab == cached.vocab
    for split in ("train", "validation"):
        a, b = getattr(memory, split), getattr(cached, split)
        assert a.columns.keys() == b.columns.keys()
        for name, column in a.columns.items():
            for attribute in ("values", "offsets"):
                if hasattr(column, attribute):
                    x, y = getattr(column, attribute), getattr(b.columns[name], attribute)
                    assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


@pytest.fixture(scope="module")
def cache_task(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("cache_task")
    data = {"train": write_jsonl(folder / "train.jsonl", sentiment_records(400, seed=5)),
            "validation": write_jsonl(folder / "validation.jsonl", sentiment_records(60, seed=6))}
    config = write_config(folder / "config.json", text_config(data))
    clean = run_cli("train", str(config), "-s", str(folder / "clean"), env={"DISTRAIN_CACHE": str(folder / "clean_cache")})
    assert clean.returncode == 0, clean.stderr
    return {"config": config, "clean": archived_weights(folder / "clean")}


def entries(cache: Path) -> list[Path]:
    return [p for p in cache.iterdir() if not p.name.startswith(".")]


def test_three_runs_on_a_cold_cache_build_once_and_train_identically(tmp_path, cache_task):
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{PLUGINS}", DISTRAIN_CACHE=str(tmp_path / "cache"))
    runs = [subprocess.Popen([sys.executable, "-m", "distrain", "train", str(cache_task["config"]), "-s",
                              str(tmp_path / f"run{i}")], env=env, stderr=subprocess.PIPE, text=True)
            for i in range(3)]
    outputs = [run.communicate(timeout=300)[1] for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], outputs
    assert sum("cached it in" in output for output in outputs) == 1, outputs
    assert sum("cache hit" in output or "built by another run" in output for output in outputs) == 2
    assert len(entries(tmp_path / "cache")) == 1
    for i in range(3):
        weights = archived_weights(tmp_path / f"run{i}")
        assert all(np.array_equal(weights[k].numpy(), cache_task["clean"][k].numpy()) for k in weights)


def test_a_damaged_cache_file_is_detected_and_rebuilt(tmp_path, cache_task):
    """A truncated file, then (in the rebuilt entry) one flipped bit: each is found and the entry rebuilt."""
    env = {"DISTRAIN_CACHE": str(tmp_path / "cache")}
    first = run_cli("train", str(cache_task["config"]), "-s", str(tmp_path / "first"), env=env)
    assert first.returncode == 0, first.stderr
    for damage in ("truncate", "flip"):
        (entry,) = entries(tmp_path / "cache")
        target = entry / "train" / "tokens::tokens::tokens.values.npy"  # the text field's one indexer and tensor
        content = bytearray(target.read_bytes())
        if damage == "truncate":
            target.write_bytes(content[: len(content) - 8])
        else:
            content[len(content) // 2] ^= 0x10
            target.write_bytes(content)
        second = run_cli("train", str(cache_task["config"]), "-s", str(tmp_path / damage), env=env)
        assert second.returncode == 0, second.stderr
        assert "is damaged" in second.stderr and "cached it in" in second.stderr, damage
        assert "cache hit" not in second.stderr, damage
        weights = archived_weights(tmp_path / damage)
        assert all(np.array_equal(weights[k].numpy(), cache_task["clean"][k].numpy()) for k in weights), damage
    third = run_cli("train", str(cache_task["config"]), "-s", str(tmp_path / "third"), env=env)
    assert "cache hit" in third.stderr and "is damaged" not in third.stderr


def wait_for(predicate, timeout: float = 120.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_prune_removes_only_what_it_says_and_never_an_entry_in_use(tmp_path):
    cache = tmp_path / "cache"
    env = {"DISTRAIN_CACHE": str(cache)}
    configs = {}
    for name, seed in (("old", 1), ("recent", 2), ("busy", 3)):
        data = {"train": write_jsonl(tmp_path / name / "train.jsonl", sentiment_records(100, seed=seed)),
                "validation": write_jsonl(tmp_path / name / "validation.jsonl", sentiment_records(20, seed=seed))}
        configs[name] = write_config(tmp_path / name / "config.json", text_config(data, num_epochs=1))
    keys = {}
    for name in ("old", "recent"):
        before = {p.name for p in entries(cache)} if cache.exists() else set()
        assert run_cli("train", str(configs[name]), "-s", str(tmp_path / name / "run"), env=env).returncode == 0
        (keys[name],) = {p.name for p in entries(cache)} - before
    a_year_ago = time.time() - 365 * 86400
    for path in (cache / keys["old"] / "meta.json", cache / ".locks" / f"{keys['old']}.use"):
        os.utime(path, (a_year_ago, a_year_ago))

    # a running job keeps its entry: it trains for many epochs while prune runs
    busy_config = json.loads(configs["busy"].read_text())
    busy_config["trainer"]["num_epochs"] = 100000
    write_config(configs["busy"], busy_config)
    environment = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{PLUGINS}", **env)
    job = subprocess.Popen([sys.executable, "-m", "distrain", "train", str(configs["busy"]), "-s",
                            str(tmp_path / "busy" / "run")], env=environment,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: (tmp_path / "busy" / "run" / "metrics_epoch_0.json").exists(), what="the busy job's first epoch")
        (keys["busy"],) = {p.name for p in entries(cache)} - {keys["old"], keys["recent"]}
        listing = run_cli("cache", "list", env=env)
        assert listing.returncode == 0 and "3 entries" in listing.stdout
        assert "in use" in next(line for line in listing.stdout.splitlines() if keys["busy"] in line)
        assert str(tmp_path / "old" / "train.jsonl") in listing.stdout

        aged = run_cli("cache", "prune", "--older-than", "30d", env=env)
        assert aged.returncode == 0, aged.stderr
        assert f"deleted {keys['old']}" in aged.stdout and aged.stdout.count("deleted") == 1
        assert {p.name for p in entries(cache)} == {keys["recent"], keys["busy"]}

        everything = run_cli("cache", "prune", "--max-size", "0", env=env)
        assert f"deleted {keys['recent']}" in everything.stdout
        assert f"kept {keys['busy']}" in everything.stdout and "in use" in everything.stdout
        assert {p.name for p in entries(cache)} == {keys["busy"]}
        assert job.poll() is None, "the running job must not be disturbed"
    finally:
        job.kill()
        job.wait()
    after = run_cli("cache", "prune", "--max-size", "0", env=env)
    assert f"deleted {keys['busy']}" in after.stdout and not entries(cache)
    bad = run_cli("cache", "prune", "--older-than", "soon", env=env)
    assert bad.returncode == 2 and "--older-than" in bad.stderr
