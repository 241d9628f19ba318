"""Host memory between training steps (``distrain.compat.host_memory``): replicated and
single-process CPU workers keep a step's freed activations for the next step instead of handing them
back to the OS and faulting them in again page by page; a user's own malloc settings win."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from support.cli import cli_environment, run_cli
from support.data import write_jsonl

LENGTH, WIDTH, BATCH, STEPS = 64, 128, 32, 20


def texts(count: int) -> list[dict]:
    """Texts of exactly LENGTH tokens from a vocabulary of about 5,000 words: activations of a few MiB a step."""
    rng = random.Random(0)
    return [{"text": " ".join(f"w{rng.randrange(5000)}" for _ in range(LENGTH)), "label": str(rng.randrange(4))}
            for _ in range(count)]


@pytest.mark.parametrize("workers", [1, 2])
def test_cpu_training_steps_reuse_their_memory_instead_of_faulting_it_in(tmp_path, workers):
    """bench_scaling's transformer (width 128, sequences of 64, batch 32): with glibc's moving thresholds
    each step handed its activations back to the OS and took ~5,000 page faults to get them again; kept,
    a step takes a few dozen."""
    write_jsonl(tmp_path / "train.jsonl", texts(STEPS * BATCH * workers))
    config = {
        "dataset_reader": {"type": "text_classification_json"},
        "train_data_path": str(tmp_path / "train.jsonl"),
        "model": {"type": "basic_classifier", "embedding_dim": WIDTH,
                  "encoder": {"type": "transformer", "num_layers": 2, "num_heads": 4, "max_length": LENGTH}},
        "data_loader": {"batch_size": BATCH, "shuffle": True},
        "trainer": {"optimizer": {"type": "adam", "lr": 0.0005}, "num_epochs": 1, "progress_bar": False,
                    "callbacks": [{"type": "test_page_fault_probe", "folder": str(tmp_path / "faults")}]},
    }
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers}
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = run_cli("train", str(tmp_path / "config.json"), "-s", str(tmp_path / "run"),
                     "--include-package", "page_fault_probe", timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads((tmp_path / "faults" / f"rank{rank}.json").read_text()) for rank in range(workers)]
    faults = [record["faults_per_step"] for record in records]
    print(f"page faults per step after warm-up, {workers} worker(s): {[round(f) for f in faults]}")
    assert all(f < 500 for f in faults), faults


def test_a_users_own_malloc_settings_win():
    code = "from distrain.compat.host_memory import keep_step_memory; print(keep_step_memory())"
    environment = {k: v for k, v in cli_environment().items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}

    def kept(**extra: str) -> str:
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment | extra)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    assert kept() == "True"
    assert kept(MALLOC_TRIM_THRESHOLD_="131072") == "False"
    assert kept(GLIBC_TUNABLES="glibc.malloc.mmap_threshold=65536") == "False"
