"""The tests' fixtures and pytest hooks, and nothing else: the helpers tests import are in the ``support``
package (``from support.cli import run_cli``; ``tests/`` is on ``sys.path`` through pyproject.toml's ``pythonpath``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.data import sentiment_records, write_jsonl
from support.paths import ROOT
from support.reference_runs import train_references
from support.serving import TrainedArchive, train_cycle_lm, train_drug_archive, train_probe_archive
from support.session_builds import built_once


@pytest.fixture(autouse=True)
def default_start_method(request, monkeypatch) -> None:
    """Tests marked ``default_start_method`` (those of worker start-up) start their CLI runs' workers from the
    fork server, as a user's run does; the others fork them from the warm CLI process (:mod:`support.cli`)."""
    from support.cli import DEFAULT_START_METHOD

    if request.node.get_closest_marker("default_start_method"):
        monkeypatch.setenv(DEFAULT_START_METHOD, "1")


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


@pytest.fixture
def text_data(tmp_path: Path) -> dict[str, Path]:
    return {
        "train": write_jsonl(tmp_path / "train.jsonl", sentiment_records(120, seed=1)),
        "validation": write_jsonl(tmp_path / "validation.jsonl", sentiment_records(40, seed=2)),
    }


# ------------------------------------------------------- session-wide archives of the `distrain serve` tests
@pytest.fixture(scope="session")
def drug_archive(tmp_path_factory) -> TrainedArchive:
    """A bag-of-embeddings classifier on the real drug reviews (a few seconds of training)."""
    return built_once(tmp_path_factory, "drug_serve", train_drug_archive)


@pytest.fixture(scope="session")
def probe_archive(tmp_path_factory) -> TrainedArchive:
    """``probe_classifier`` (tests/plugins/serving_probes.py) on the toy sentiment task."""
    return built_once(tmp_path_factory, "probe_serve", train_probe_archive)


@pytest.fixture(scope="session")
def cycle_lm_archive(tmp_path_factory) -> Path:
    """A tiny Llama (context 64) trained on the cycle corpus (one process, ~10 s), so its continuations
    depend on the prompt; it continues 12 tokens by default (``model.generation``)."""
    return built_once(tmp_path_factory, "cycle_lm", train_cycle_lm)


# ------------------------------------ one-process references shared by test_fsdp.py and test_model_parallel.py
@pytest.fixture(scope="session")
def one_process_references(tmp_path_factory) -> dict[str, Path]:
    """``{"mlm_one": DIR, "classifier_one": DIR, "references_root": ROOT}``; the MLM reference checkpoints
    after every batch, so the resume tests can also start from it (with ``ROOT/mlm_base.json``, its config
    on this folder's copy of the data). Trained once for the whole test run, whichever process asks first."""
    return built_once(tmp_path_factory, "references", train_references)


# --------------------------------------------------------------------------------------------------- hooks
def pytest_sessionstart(session) -> None:
    """Where nothing may be skipped (``.ci/run`` sets ``DISTRAIN_TESTS_STRICT``), missing fixtures stop the run
    before any test, naming their folder: CI fails rather than skipping the tests that read them."""
    from support.allennlp_fixtures import MISSING, available

    if os.environ.get("DISTRAIN_TESTS_STRICT") and not available():
        raise pytest.UsageError(f"{MISSING} (DISTRAIN_TESTS_STRICT is set: they are required)")


def pytest_collection_modifyitems(items: list) -> None:
    """Slowest files first, by their times in the last stored whole-suite run (``tests/support/durations.py``).
    pytest runs the suite on 2 processes (``-n 2 --dist loadfile`` in pyproject): each file goes whole to
    the next free process, so starting with the longest keeps both busy to the end instead of leaving one
    to finish a long file alone. Files not stored (new ones) follow in their usual order."""
    from support.durations import slowest_first

    rank = {name: position for position, name in enumerate(slowest_first())}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: each file's own order is kept
