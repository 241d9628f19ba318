"""Shared helpers: run the CLI as a user would, and write tiny datasets and configs."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).resolve().parent / "plugins"


def cli_environment(env: dict | None = None) -> dict:
    """The environment a CLI process gets in tests: test plugins importable, offline, a test cache."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "src"), str(PLUGINS), environment.get("PYTHONPATH", "")]
    )
    environment.setdefault("HF_HUB_OFFLINE", "1")
    environment.update(env or {})
    return environment


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m distrain ARGS`` in a fresh process; test plugins importable; output captured."""
    environment = cli_environment(env)
    return subprocess.run(
        [sys.executable, "-m", "distrain", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env=environment,
    )


def built_once(tmp_path_factory, name: str, build):
    """``build(folder)`` once for the whole test run, even when pytest-xdist runs it in several processes:
    the first process to ask builds under a lock in the run's shared temporary folder, the others wait and
    read what it returned (pickled). A build that fails leaves nothing, so the next one asking tries again."""
    import fcntl
    import pickle

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the folder every worker's own temporary folder is in
    folder, result = root / f"shared-{name}", root / f"shared-{name}.pickle"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return pickle.loads(result.read_bytes())
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        folder.mkdir()
        value = build(folder)
        result.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session", autouse=True)
def temporary_caches(tmp_path_factory) -> Path:
    """Every cache a test run writes (distrain's dataset cache, Hugging Face datasets) lives in this
    session's temporary folder, never in ~/.cache; processes the tests start inherit it. They also
    inherit ``DISTRAIN_CURVES=off``: drawing curves.png costs each training run about a second, so only
    the tests about curves (test_run_reports.py) turn it on."""
    folder = tmp_path_factory.mktemp("caches")
    saved = {name: os.environ.get(name) for name in ("DISTRAIN_CACHE", "HF_DATASETS_CACHE", "DISTRAIN_CURVES")}
    os.environ["DISTRAIN_CACHE"] = str(folder / "distrain")
    os.environ["HF_DATASETS_CACHE"] = str(folder / "hf_datasets")
    os.environ["DISTRAIN_CURVES"] = "off"
    yield folder
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def prepared_data(tmp_path_factory) -> Path:
    """``scripts/prepare_data.py`` run once per test run: DIR/data/{digits,drug_reviews}/*.jsonl, so a
    shipped config's relative ``data/...`` paths resolve with DIR as the working directory."""
    def prepare(root: Path) -> Path:
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare_data.py"), "--out", str(root / "data")],
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        return root

    return built_once(tmp_path_factory, "prepared", prepare)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def write_config(path: Path, config: dict) -> Path:
    path.write_text(json.dumps(config, indent=2))
    return path


WORDS = {
    "pos": ["good", "great", "fine", "excellent", "happy", "love"],
    "neg": ["bad", "awful", "poor", "terrible", "sad", "hate"],
}


def sentiment_records(count: int, seed: int = 0) -> list[dict]:
    """A learnable toy text task: the label is the word family that dominates the text."""
    rng = random.Random(seed)
    records = []
    for _ in range(count):
        label = rng.choice(["pos", "neg"])
        words = [rng.choice(WORDS[label]) for _ in range(rng.randint(2, 6))]
        words += [rng.choice(["the", "a", "movie", "it", "was"]) for _ in range(rng.randint(0, 4))]
        rng.shuffle(words)
        records.append({"text": " ".join(words), "label": label})
    return records


@pytest.fixture
def text_data(tmp_path: Path) -> dict[str, Path]:
    return {
        "train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(120, seed=1)),
        "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(40, seed=2)),
    }


def text_config(data: dict[str, Path], **trainer) -> dict:
    return {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(data["train"]),
        "validation_data_path": str(data["validation"]),
        "model": {"type": "basic_classifier", "embedding_dim": 8, "encoder": {"type": "boe"}},
        "data_loader": {"batch_size": 8},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adam", "lr": 0.01}, "progress_bar": False, **trainer},
    }


def pytest_collection_modifyitems(items: list) -> None:
    """Slowest files first, by their times in the last stored whole-suite run (``tests/durations.py``).
    pytest runs the suite on 2 processes (``-n 2 --dist loadfile`` in pyproject): each file goes whole to
    the next free process, so starting with the longest keeps both busy to the end instead of leaving one
    to finish a long file alone. Files not stored (new ones) follow in their usual order."""
    from durations import slowest_first

    rank = {name: position for position, name in enumerate(slowest_first())}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file's own order is kept


# session-wide archives for the `distrain serve` tests (trained once, shared by its test modules)
from serving_support import cycle_lm_archive, drug_archive, probe_archive  # noqa: E402,F401

# one-process references shared by test_fsdp.py and test_model_parallel.py
from reference_runs import one_process_references  # noqa: E402,F401
