"""scripts/bench_peers.py: its pure helpers, and the parts it shares with distrain (the config and the
model the peers train), without the peers themselves (``--help`` answers without the bench extra;
tests/scripts/test_scripts.py runs its ``--quick`` with the peers)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from support.paths import ROOT

SCRIPT = ROOT / "scripts" / "bench_peers.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_peers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_peers"] = module
    spec.loader.exec_module(module)
    return module


def test_threads_share_the_cores_evenly(bench):
    assert bench.threads_per_process(2, 1) == 2
    assert bench.threads_per_process(2, 2) == 1
    assert bench.threads_per_process(16, 3) == 5
    assert bench.threads_per_process(1, 4) == 1


def test_the_global_batch_splits_evenly_or_not_at_all(bench):
    assert bench.per_process_batch(64, 1) == 64
    assert bench.per_process_batch(64, 2) == 32
    with pytest.raises(ValueError, match="does not split evenly"):
        bench.per_process_batch(64, 3)


def test_median_and_range(bench):
    assert bench.median_and_range([3.0, 1.0, 2.0]) == (2.0, 1.0, 3.0)
    assert bench.median_and_range([4.0, 1.0]) == (2.5, 1.0, 4.0)


def test_ratio_is_against_the_faster_peer_on_two_workers(bench):
    medians = {"distrain_2": 400.0, "lightning_2": 380.0, "accelerate_2": 500.0, "distrain_1": 999.0,
               "lightning_1": 1.0, "accelerate_1": 1.0}
    assert bench.ratio_vs_best_peer(medians) == ("accelerate", 0.8)
    assert bench.ratio_vs_best_peer({"distrain_2": 300.0, "lightning_2": 200.0}) == ("lightning", 1.5)


def test_the_benchmark_config_is_a_valid_distrain_experiment(bench, tmp_path):
    resolve_experiment, _ = bench._distrain_data_api()
    for workers in (1, 2):
        experiment = resolve_experiment(bench.model_config(tmp_path / "train.jsonl", workers)).build()
        assert experiment.data_loader.batch_size * workers == bench.GLOBAL_BATCH


def test_peers_train_the_module_distrain_builds_on_the_same_token_ids(bench, tmp_path, monkeypatch):
    import torch

    from bench_scaling import LENGTH, make_data

    monkeypatch.setenv("DISTRAIN_CACHE", str(tmp_path / "cache"))
    data, tensors = tmp_path / "train.jsonl", tmp_path / "tensors.pt"
    make_data(data, 8)
    bench.tensorise(data, tensors)
    saved = torch.load(tensors, weights_only=False)
    assert saved["tokens"].shape == (8, LENGTH) and saved["label"].shape == (8,)
    first, second = bench.build_model(saved), bench.build_model(saved)
    assert type(first).__name__ == "BasicClassifier"
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items()):
        assert torch.equal(a, b), name  # same seed, same initial weights in every framework
    loss = first(tokens={"tokens": {"tokens": saved["tokens"]}}, label=saved["label"])["loss"]
    assert loss.ndim == 0 and torch.isfinite(loss)


BLOCK_PEERS = """
import runpy, sys
class NoPeers:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("lightning", "accelerate", "pytorch_lightning"):
            raise ImportError(f"{name} is blocked: as without the bench extra")
sys.meta_path.insert(0, NoPeers())
sys.argv = [sys.argv[1], "--help"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_help_works_without_the_peers_installed():
    shown = subprocess.run([sys.executable, "-c", BLOCK_PEERS, str(SCRIPT)], capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "--quick" in shown.stdout and "bench" in shown.stdout
