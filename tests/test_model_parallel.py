"""Model parallelism (``tensor_parallel_size``, ``pipeline_parallel_size``) changes where the model's
parts live and nothing else: trained through the CLI on gloo processes, the tiny BERT MLM, the tiny
transformer classifier and the digits-style feed-forward classifier end with the weights and
metrics of one process on the same global batches, and their checkpoints resume under other layouts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli, write_config
from distributed_support import final_metrics, max_weight_difference
from test_fsdp import GLOBAL_BATCH, PLUGIN, classifier_config, mlm_config


def variant(base: dict, workers: int = 1, tp: int = 1, pp: int = 1, strategy: dict | None = None,
            pipeline: dict | None = None) -> dict:
    """``base`` on ``workers`` processes, ``tp`` x ``pp`` of them per model copy, the same global batch."""
    config = json.loads(json.dumps(base))
    data_parallel = workers // (tp * pp)
    config["data_loader"]["batch_size"] = GLOBAL_BATCH // data_parallel
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
        if strategy:
            config["distributed"]["strategy"] = strategy
        if tp > 1:
            config["distributed"]["tensor_parallel_size"] = tp
        if pp > 1:
            config["distributed"]["pipeline_parallel_size"] = pp
            config["distributed"]["pipeline"] = pipeline or {"schedule": "1f1b", "microbatches": 4}
    return config


#: (run name, model, variant arguments); the references are one process
RUNS = {
    "mlm_one": ("mlm", {}),
    "mlm_tp2": ("mlm", {"workers": 2, "tp": 2}),
    "classifier_one": ("classifier", {}),
    "classifier_tp2": ("classifier", {"workers": 2, "tp": 2}),
}


@pytest.fixture(scope="session")
def mp_runs(tmp_path_factory) -> dict[str, Path]:
    """Every training run of this module, once, through the CLI (the same data for all of a model's runs)."""
    root = tmp_path_factory.mktemp("model_parallel")
    bases = {"mlm": mlm_config(root / "mlm"), "classifier": classifier_config(root / "classifier")}
    runs = {"root": root}
    for name, (model, arguments) in RUNS.items():
        out = root / name
        config = write_config(root / f"{name}.json", variant(bases[model], **arguments))
        result = run_cli("train", str(config), "-s", str(out), *PLUGIN, timeout=300)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        runs[name] = out
    for model, base in bases.items():
        (root / f"{model}_base.json").write_text(json.dumps(base))
    return runs


@pytest.mark.parametrize("run,reference", [
    ("mlm_tp2", "mlm_one"),
    ("classifier_tp2", "classifier_one"),
])
def test_split_model_matches_one_process(mp_runs, run, reference):
    difference = max_weight_difference(mp_runs[reference], mp_runs[run])
    print(f"{run} vs {reference}: max |weight difference| in model.tar.gz = {difference:.2e}")
    assert difference <= 1e-5
    expected, got = final_metrics(mp_runs[reference]), final_metrics(mp_runs[run])
    names = [key for key in expected if key.startswith(("training_", "validation_")) and key != "training_duration"]
    assert any("perplexity" in key or "accuracy" in key for key in names)
    for key in names:
        assert got[key] == pytest.approx(expected[key], abs=1e-5), key


def test_tensor_parallel_splits_the_planned_layers(mp_runs):
    log = (mp_runs["mlm_tp2"] / "out_worker0.log").read_text()
    assert "tensor parallel: 12 linear layer(s) split over mesh tp 2 = 2 process(es)" in log
