"""``trainer.compile``: the compiled model is compiled (dynamo compiled its frames into graphs on every rank, which
a compile that handed back the eager model would not) and trains like the eager one (same step losses to 1e-4
relative, same final accuracy to half a point) on 1 and 2 workers, and the option is validated."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import cli_environment, run_cli
from support.data import write_jsonl
from support.paths import ROOT

#: which modules the fork server preloads for compiling and eager workers is part of what is tested here
pytestmark = pytest.mark.default_start_method

EXAMPLES = {
    # the digits example as shipped, shortened to 2 epochs
    "digits": {"config": "digits_mlp.jsonnet", "data": "digits", "overrides": {"trainer.num_epochs": 2}},
    # the transformer encoder classifier of scripts/bench_scaling.py (smaller), on fixed-length texts
    "transformer": {
        "config": "drug_reviews_boe.jsonnet", "data": "fixed_length",
        "overrides": {"model.encoder": {"type": "transformer", "num_layers": 2, "num_heads": 4, "max_length": 16,
                                        "averaged": None},
                      "model.embedding_dim": 32, "model.dropout": 0.1, "trainer.num_epochs": 1},
    },
}
GLOBAL_BATCH = 16


def fixed_length_texts(count: int, seed: int) -> list[dict]:
    """Texts of exactly 16 tokens whose label is the word range most of them come from."""
    rng = random.Random(seed)
    records = []
    for _ in range(count):
        label = rng.randrange(4)
        words = [f"w{label * 50 + rng.randrange(50)}" if rng.random() < 0.6 else f"w{rng.randrange(200)}" for _ in range(16)]
        records.append({"text": " ".join(words), "label": str(label)})
    return records


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compile-data")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "prepare_data.py"), "--only", "digits", "--out", str(out)],
                   check=True, capture_output=True)
    write_jsonl(out / "fixed_length" / "train.jsonl", fixed_length_texts(20 * GLOBAL_BATCH, seed=1))
    write_jsonl(out / "fixed_length" / "validation.jsonl", fixed_length_texts(96, seed=2))
    return out


@pytest.fixture(scope="module")
def runs(data, tmp_path_factory):
    """``runs(example, workers, compiled)`` -> (rank 0's step losses, final metrics, each rank's record of
    whether torch's compiler was imported: see ``plugins/compiler_probe.py``); each trained once."""
    done: dict = {}
    scratch = tmp_path_factory.mktemp("compile-runs")
    cache = tmp_path_factory.mktemp("compile-cache")

    def run(example: str, workers: int, compiled: bool):
        key = (example, workers, compiled)
        if key not in done:
            spec = EXAMPLES[example]
            folder = scratch / f"{example}-{workers}-{compiled}"
            data_dir = data / spec["data"]
            overrides = {
                "train_data_path": str(data_dir / "train.jsonl"),
                "validation_data_path": str(data_dir / "validation.jsonl"),
                "data_loader.batch_size": GLOBAL_BATCH // workers,
                "trainer.progress_bar": False,
                "trainer.compile": compiled,
                "trainer.callbacks": [{"type": "test_step_losses", "folder": str(folder / "losses")},
                                      {"type": "test_compiler_probe", "folder": str(folder / "losses")}],
                **spec["overrides"],
            }
            if workers > 1:
                overrides["distributed"] = {"cuda_devices": [-1] * workers}
            result = run_cli("train", str(ROOT / "configs" / spec["config"]), "-s", str(folder / "out"),
                             "-o", json.dumps(overrides), "--include-package", "step_losses",
                             "--include-package", "compiler_probe",
                             timeout=600, env={"DISTRAIN_CACHE": str(cache)})
            assert result.returncode == 0, result.stderr[-3000:]
            losses = [json.loads(line)["loss"] for line in (folder / "losses" / "rank0.jsonl").read_text().splitlines()]
            metrics = json.loads((folder / "out" / "metrics.json").read_text())
            compiler = [json.loads((folder / "losses" / f"rank{rank}.json").read_text()) for rank in range(workers)]
            done[key] = (losses, metrics, compiler)
        return done[key]

    return run


#: one worker and two, each on one model: the four pairs cost CI a minute more and covered no other path
#: (digits on 2 workers is also the import test's run below)
@pytest.mark.parametrize("example,workers", [("digits", 2), ("transformer", 1)])
def test_compiled_model_compiles_and_trains_like_the_eager_one(runs, example, workers):
    eager_losses, eager_metrics, eager = runs(example, workers, False)
    compiled_losses, compiled_metrics, compiled = runs(example, workers, True)
    assert all(record["frames_compiled"] >= 1 and record["graphs"] >= 1 for record in compiled), compiled
    assert all(record["frames_compiled"] == record["graphs"] == 0 for record in eager), eager
    assert len(compiled_losses) == len(eager_losses) >= 20
    worst = max(abs(c - e) / max(abs(e), 1e-12) for c, e in zip(compiled_losses[:20], eager_losses[:20]))
    print(f"{example} on {workers} worker(s): first 20 step losses differ by at most {worst:.2e} (relative); "
          f"validation accuracy eager {eager_metrics['validation_accuracy']:.4f}, "
          f"compiled {compiled_metrics['validation_accuracy']:.4f}")
    assert worst <= 1e-4
    accuracy_gap = abs(compiled_metrics["validation_accuracy"] - eager_metrics["validation_accuracy"])
    assert accuracy_gap <= 0.005


def test_compile_must_be_true_or_false(tmp_path):
    result = run_cli("check", str(ROOT / "configs" / "digits_mlp.jsonnet"), "-o", '{"trainer.compile": "yes"}')
    assert result.returncode == 2
    assert "trainer.compile: expected true or false" in result.stderr


def test_ddp_workers_import_the_compiler_only_when_they_compile(runs):
    """Plain DDP workers train without torch's compiler (a second of imports each, and the fork
    server's critical path: see ``compat/deferred_compiler.py``); workers that compile find it preloaded by the
    fork server (already imported when their callbacks are built, before the model exists)."""
    _, _, eager = runs("digits", 2, False)
    _, _, compiled = runs("digits", 2, True)
    assert [record["loaded"] for record in eager] == [False, False], eager
    assert [record["loaded_at_build"] for record in compiled] == [True, True], compiled


def test_training_steps_and_metric_updates_leave_the_compiler_unimported_until_something_compiles():
    """Optimizer steps and metric updates touch ``torch._dynamo`` (``graph_break``, functions marked never
    to be compiled); that must not import it (about a second, see ``compat/deferred_compiler.py``) where nothing is
    compiled, and once something compiles the module must be torch's, in place, marks included."""
    code = """
import sys, torch
import distrain.optim.optimizers
from distrain.metrics.categorical_accuracy import CategoricalAccuracy
from distrain.compat.deferred_compiler import compiler_loaded
stand_in = sys.modules["torch._dynamo"]
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.AdamW(model.parameters())
model(torch.ones(3, 2)).sum().backward()
optimizer.step(); optimizer.zero_grad(); optimizer.load_state_dict(optimizer.state_dict())
metric = CategoricalAccuracy()
metric(torch.tensor([[0.1, 0.9], [0.8, 0.2]]), torch.tensor([1, 1]))
assert not compiler_loaded(), "a training step or a metric update imported the compiler"
from distrain.compat.deferred_compiler import defer_disabled_methods
torch.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0, world_size=1)
defer_disabled_methods(torch.nn.parallel.DistributedDataParallel)  # as the DDP strategy does
wrapped = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
wrapped(torch.ones(3, 2)).sum().backward()
assert not wrapped._use_python_reducer
assert not compiler_loaded(), "wrapping a model in DDP or its forward/backward imported the compiler"
settings = sys.modules["torch._dynamo.config"]
compiled = torch.compile(lambda scores, gold: (metric(scores, gold), scores * 2)[1], backend="eager")
compiled(torch.tensor([[0.3, 0.7]]), torch.tensor([1]))
assert compiler_loaded() and sys.modules["torch._dynamo"] is stand_in is torch._dynamo
assert type(stand_in).__name__ == "module" and hasattr(stand_in, "optimize")
disabled = getattr(CategoricalAccuracy.__dict__["__call__"].__wrapped__, "__dynamo_disable")
assert getattr(disabled, "_torchdynamo_disable", False), "after torch.compile, updates are not disabled as torch's are"
optimizer.add_param_group({"params": [torch.nn.Parameter(torch.ones(1))]})
disabled = getattr(torch.optim.Optimizer.add_param_group.__wrapped__, "__dynamo_disable")
assert getattr(disabled, "_torchdynamo_disable", False), "after torch.compile, add_param_group is not disabled"
assert torch._dynamo.config is settings, "the compiler did not keep the settings module DDP read"
from distrain.compat.deferred_compiler import disable_deferred
disable_deferred()
inner = torch.nn.parallel.DistributedDataParallel._inside_ddp_forward.__wrapped__.__wrapped__
assert getattr(getattr(inner, "__dynamo_disable"), "_torchdynamo_disable", False), "DDP's forward mark is not torch's"
print(metric.get_metric())
"""
    from distrain.runtime.worker_process import free_port

    result = subprocess.run([sys.executable, "-c", code, str(free_port())], capture_output=True, text=True,
                            timeout=120, env=cli_environment())
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == str(2 / 3)
