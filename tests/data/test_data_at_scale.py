"""Data at scale: every record once per epoch on any world size, shares read unparsed, the shared
cache, sharded and Hugging Face readers, and the shard command."""

from __future__ import annotations

import json
import os
import re
import math
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import write_jsonl
from support.paths import PLUGINS, ROOT

from distrain import DataError, DatasetReader
from distrain import ReaderShard

if str(PLUGINS) not in sys.path:
    sys.path.insert(0, str(PLUGINS))
import data_probe  # noqa: E402,F401 - registers the test readers in this process too

RECORDS = 45  # not a multiple of 2, 3, 4 or 6: shares are uneven


def id_records(count: int = RECORDS) -> list[dict]:
    return [{"id": i, "text": " ".join(f"w{(i * k) % 11}" for k in range(1 + i % 4))} for i in range(count)]


def probe_config(data: Path, record_dir: Path, world_size: int, num_workers: int, lazy: bool,
                 validation_workers: int | None = None) -> dict:
    config = {
        "dataset_reader": {"type": "id_text_json"},
        "train_data_path": str(data),
        "model": {"type": "id_recorder", "record_dir": str(record_dir)},
        "data_loader": {"batch_size": 4, "lazy": lazy, "num_workers": num_workers},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "sgd", "lr": 0.01}, "progress_bar": False},
    }
    if validation_workers is not None:
        config["validation_data_path"] = str(data)
        config["validation_data_loader"] = {"batch_size": 3, "lazy": lazy, "num_workers": validation_workers,
                                            "shuffle": False}
    if world_size > 1:
        config["distributed"] = {"cuda_devices": [-1] * world_size}
    return config


def seen_ids(record_dir: Path, phase: str = "train") -> list[int]:
    return sorted(int(line) for path in record_dir.glob(f"{phase}.*.txt") for line in path.read_text().split())


# Each run covers loader workers 0 and 2: one for the training epoch, the other for the validation pass.
@pytest.mark.parametrize("world_size,lazy", [(1, True), (2, True), (3, True), (2, False)])
def test_one_epoch_sees_every_record_exactly_once(tmp_path, world_size, lazy):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    train_workers, validation_workers = (0, 2) if world_size == 2 and lazy else (2, 0)
    config = probe_config(data, tmp_path / "seen", world_size, train_workers, lazy, validation_workers)
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"),
                     "--include-package", "data_probe", env={"DISTRAIN_CACHE": str(tmp_path / "cache")}, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert seen_ids(tmp_path / "seen", "train") == list(range(RECORDS))
    assert seen_ids(tmp_path / "seen", "validation") == list(range(RECORDS))
    if lazy:  # each streaming reader parsed at most its share of the file, the shares adding up
        logs = "".join(path.read_text() for path in (tmp_path / "run").glob("out_worker*.log"))
        parsed = [tuple(map(int, m)) for m in re.findall(r"reader (\d+) of (\d+) parsed (\d+) record", logs)]
        # the readers of both passes report (world_size x loader processes each), so the checks below run
        expected_counts = {world_size * max(train_workers, 1), world_size * max(validation_workers, 1)}
        assert {count for _, count, _ in parsed} == expected_counts, logs[-2000:]
        for readers in {count for _, count, _ in parsed}:
            shares = {index: n for index, count, n in parsed if count == readers}
            assert sorted(shares) == list(range(readers))
            assert max(shares.values()) <= math.ceil(RECORDS / readers) and sum(shares.values()) == RECORDS


@pytest.mark.parametrize("readers", [1, 2, 3, 4])
def test_distributed_aware_reader_parses_at_most_its_share(tmp_path, readers):
    data = write_jsonl(tmp_path / "train.jsonl", id_records(101))
    seen = []
    for index in range(readers):
        reader = DatasetReader.by_name("text_classification_json")(text_key="text", label_key="id")
        # rank-major over (rank x loader worker): 2 loader workers per rank when the count allows
        workers = 2 if readers % 2 == 0 else 1
        reader.set_shard(ReaderShard(rank=index // workers, world_size=readers // workers,
                                     worker=index % workers, num_workers=workers))
        labels = [instance["label"].label for instance in reader.read(data)]
        assert reader.num_parsed <= math.ceil(101 / readers)
        seen += labels
    assert sorted(map(int, seen)) == list(range(101))


def test_unaware_reader_still_gets_its_share_with_one_notice(tmp_path, caplog):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    caplog.set_level("INFO")
    seen = []
    for rank in range(3):
        reader = DatasetReader.by_name("id_text_unaware")()
        reader.set_shard(ReaderShard(rank=rank, world_size=3))
        seen += [instance["id"].value for instance in reader.read(data)]
    assert sorted(seen) == list(range(RECORDS))
    notices = [r for r in caplog.records if "not distributed-aware" in r.getMessage()]
    assert len(notices) == 1


def test_second_run_maps_the_cache_and_changed_data_is_read_again(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    config = write_config(tmp_path / "config.json", probe_config(data, tmp_path / "seen", 1, 0, False))
    env = {"DISTRAIN_CACHE": str(tmp_path / "cache")}

    def train(name: str) -> subprocess.CompletedProcess:
        result = run_cli("train", str(config), "-s", str(tmp_path / name), "--include-package", "data_probe", env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        return result

    first = train("first")
    assert "cached it in" in first.stderr and "cache hit" not in first.stderr
    assert len([p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]) == 1
    assert "cache hit" in train("second").stderr
    write_jsonl(data, id_records(RECORDS - 1))
    third = train("third")
    assert "cache hit" not in third.stderr
    assert len([p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]) == 2


def test_cache_can_be_switched_off_by_environment_and_config(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    config = probe_config(data, tmp_path / "seen", 1, 0, False)
    off = run_cli("train", str(write_config(tmp_path / "a.json", config)), "-s", str(tmp_path / "a"),
                  "--include-package", "data_probe", env={"DISTRAIN_CACHE": "off"})
    assert off.returncode == 0, off.stderr[-3000:]
    config["dataset_cache"] = False
    no_key = run_cli("train", str(write_config(tmp_path / "b.json", config)), "-s", str(tmp_path / "b"),
                     "--include-package", "data_probe", env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert no_key.returncode == 0, no_key.stderr[-3000:]
    assert not (tmp_path / "cache").exists()
    assert "cache" not in off.stderr + no_key.stderr


def test_shard_command_writes_balanced_shards_and_keeps_existing_files(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records(100))
    result = run_cli("shard", str(data), "--num-shards", "3", "-o", str(tmp_path / "shards"))
    assert result.returncode == 0, result.stderr
    shards = sorted((tmp_path / "shards").glob("train-*-of-00003.jsonl"))
    counts = [len(path.read_text().splitlines()) for path in shards]
    assert sorted(counts) == [33, 33, 34]
    lines = sorted(line for path in shards for line in path.read_text().splitlines())
    assert lines == sorted(data.read_text().splitlines())
    again = run_cli("shard", str(data), "--num-shards", "3", "-o", str(tmp_path / "shards"))
    assert again.returncode == 2 and "already exists" in again.stderr and len(again.stderr.splitlines()) == 1


def read_sharded(path: Path, shard: ReaderShard) -> list[int]:
    reader = DatasetReader.by_name("sharded")(base_reader=DatasetReader.by_name("id_text_json")())
    reader.set_shard(shard)
    return [instance["id"].value for instance in reader.read(path)]


def test_sharded_reader_deals_glob_directory_and_tarball_shards(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    assert run_cli("shard", str(data), "-n", "4", "-o", str(tmp_path / "shards")).returncode == 0
    with tarfile.open(tmp_path / "shards.tar.gz", "w:gz") as tar:
        for path in sorted((tmp_path / "shards").iterdir()):
            tar.add(path, arcname=path.name)
    for source in (tmp_path / "shards" / "train-*.jsonl", tmp_path / "shards", tmp_path / "shards.tar.gz"):
        assert sorted(read_sharded(source, ReaderShard())) == list(range(RECORDS))
        shares = [read_sharded(source, ReaderShard(rank, 2, worker, 2)) for rank in range(2) for worker in range(2)]
        assert sorted(sum(shares, [])) == list(range(RECORDS))
        assert all(shares)
    with pytest.raises(DataError, match=r"4 shard file\(s\) for 6 readers"):
        read_sharded(tmp_path / "shards", ReaderShard(0, 3, 0, 2))


def test_streaming_more_readers_than_shards_is_a_one_line_error_before_training(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    assert run_cli("shard", str(data), "-n", "3", "-o", str(tmp_path / "shards")).returncode == 0
    config = probe_config(tmp_path / "shards", tmp_path / "seen", 2, 2, lazy=True)
    config["dataset_reader"] = {"type": "sharded", "base_reader": {"type": "id_text_json"}}
    result = run_cli("train", str(write_config(tmp_path / "config.json", config)), "-s", str(tmp_path / "run"),
                     "--include-package", "data_probe", env={"DISTRAIN_CACHE": "off"})
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith("error: ") and "3 shard file(s) for 4 readers" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("streaming", [False, True])
def test_huggingface_reader_shares_cover_json_csv_parquet_and_saved_datasets(tmp_path, streaming):
    import datasets

    records = id_records()
    write_jsonl(tmp_path / "data.jsonl", records)
    table = datasets.Dataset.from_list(records)
    table.to_csv(str(tmp_path / "data.csv"))
    table.to_parquet(str(tmp_path / "data.parquet"))
    table.save_to_disk(str(tmp_path / "saved"))
    fields = {"id": {"column": "id", "kind": "metadata"}, "tokens": {"column": "text"}}
    for source in ("data.jsonl", "data.csv", "data.parquet", "saved"):
        shares = []
        for index in range(3):
            reader = DatasetReader.by_name("huggingface")(
                fields={k: _column(v) for k, v in fields.items()}, streaming=streaming)
            reader.set_shard(ReaderShard(index, 3))
            shares.append([instance["id"].value for instance in reader.read(tmp_path / source)])
            assert reader.num_parsed <= math.ceil(RECORDS / 3)
        assert sorted(sum(shares, [])) == list(range(RECORDS)), source


def _column(spec: dict):
    from distrain.data.readers.huggingface import ColumnField

    return ColumnField(**spec)


def test_huggingface_reader_trains_from_config_and_names_a_missing_column(tmp_path):
    import datasets

    records = [{"review": r["text"], "rating": "pos" if r["id"] % 2 else "neg"} for r in id_records()]
    datasets.Dataset.from_list(records).to_parquet(str(tmp_path / "train.parquet"))
    config = {
        "dataset_reader": {"type": "huggingface", "fields": {
            "tokens": {"column": "review"}, "label": {"column": "rating", "kind": "label"}}},
        "train_data_path": str(tmp_path / "train.parquet"),
        "model": {"type": "basic_classifier", "embedding_dim": 4, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 1, "progress_bar": False},
    }
    ok = run_cli("train", str(write_config(tmp_path / "ok.json", config)), "-s", str(tmp_path / "ok"),
                 env={"DISTRAIN_CACHE": "off"})
    assert ok.returncode == 0, ok.stderr[-3000:]
    reader = DatasetReader.by_name("huggingface")(fields={"label": _column({"column": "stars", "kind": "label"})})
    with pytest.raises(DataError, match=r"no column\(s\) 'stars'; columns are review, rating"):
        list(reader.read(tmp_path / "train.parquet"))


def test_sharded_drug_reviews_on_two_workers_reach_the_accuracy_bar(prepared_data, tmp_path):
    # the set-up installs the package that ships this data: if it is missing, this fails
    train = prepared_data / "data" / "drug_reviews" / "train.jsonl"
    assert run_cli("shard", str(train), "-n", "3", "-o", str(tmp_path / "shards")).returncode == 0
    config = tmp_path / "sharded.jsonnet"
    config.write_text(f"""
        local base = import "{ROOT / 'configs' / 'drug_reviews_boe.jsonnet'}";
        base + {{
          dataset_reader: {{ type: "sharded", base_reader: base.dataset_reader }},
          validation_dataset_reader: base.dataset_reader,
          train_data_path: "{tmp_path / 'shards' / 'train-*.jsonl'}",
          validation_data_path: "{prepared_data / 'data' / 'drug_reviews' / 'validation.jsonl'}",
          distributed: {{ cuda_devices: [-1, -1] }},
          trainer+: {{ progress_bar: false }},
        }}""")
    result = run_cli("train", str(config), "-s", str(tmp_path / "run"),
                     env={"DISTRAIN_CACHE": str(tmp_path / "cache")}, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["best_validation_accuracy"] >= 0.69, metrics


def torchrun(tmp_path: Path, config: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ, DISTRAIN_CACHE=str(tmp_path / "cache"), HF_HUB_OFFLINE="1",
                       PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(PLUGINS), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m", "distrain",
         "train", str(config), "-s", str(tmp_path / "run"), "--include-package", "data_probe"],
        capture_output=True, text=True, timeout=180, env=environment,
    )


def test_under_torchrun_rank0_builds_the_cache_and_every_rank_maps_it(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    result = torchrun(tmp_path, write_config(tmp_path / "config.json", probe_config(data, tmp_path / "seen", 1, 0, False)))
    assert result.returncode == 0, result.stderr[-3000:]
    assert len([p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]) == 1
    assert result.stderr.count("cached it in") == 1
    assert seen_ids(tmp_path / "seen", "train") == list(range(RECORDS))
    assert "cache hit" in (tmp_path / "run" / "out_worker1.log").read_text()


def test_under_torchrun_bad_data_on_rank0_stops_every_rank_without_hanging(tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", id_records())
    with open(data, "a") as out:
        out.write("{not json\n")
    result = torchrun(tmp_path, write_config(tmp_path / "config.json", probe_config(data, tmp_path / "seen", 1, 0, False)))
    assert result.returncode != 0
    assert f"{data}:{RECORDS + 1}:" in result.stderr
    assert not any((tmp_path / "cache").glob("*/meta.json"))


def test_bad_loader_settings_are_all_reported_before_any_data_is_read(tmp_path):
    config = probe_config(tmp_path / "missing.jsonl", tmp_path / "seen", 1, -1, lazy=True, validation_workers=-2)
    config["data_loader"]["max_instances_in_memory"] = 0
    result = run_cli("check", str(write_config(tmp_path / "config.json", config)), "--include-package", "data_probe")
    assert result.returncode == 2
    for problem in ("data_loader.num_workers: must be 0 or more", "data_loader.max_instances_in_memory: must be at least 1",
                    "validation_data_loader.num_workers: must be 0 or more"):
        assert problem in result.stderr
    assert "missing.jsonl" not in result.stderr
