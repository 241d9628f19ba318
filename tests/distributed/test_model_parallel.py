"""Model parallelism (``tensor_parallel_size``, ``pipeline_parallel_size``) changes where the model's
parts live and nothing else: trained through the CLI on gloo processes, the tiny BERT MLM, the tiny
transformer classifier and the digits-style feed-forward classifier end with the weights and
metrics of one process on the same global batches, and their checkpoints resume under other layouts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import digits_records
from support.distributed import final_metrics, max_weight_difference
from test_fsdp import GLOBAL_BATCH, PLUGIN, classifier_config, mlm_config


def mlp_config(root: Path) -> dict:
    """A feed-forward classifier on 60 tiny digits (the last global batch holds 4)."""
    from support.data import write_jsonl

    return {
        "dataset_reader": {"type": "feature_classification_json"},
        "train_data_path": str(write_jsonl(root / "train.jsonl", digits_records(60, 0))),
        "validation_data_path": str(write_jsonl(root / "validation.jsonl", digits_records(20, 4))),
        "model": {"type": "feedforward_classifier", "input_dim": 64, "feature_scale": 1 / 16,
                  "feedforward": {"hidden_dims": [16, 16]}},
        "data_loader": {"batch_size": GLOBAL_BATCH, "shuffle": True},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adam", "lr": 0.01}, "grad_norm": 1.0,
                    "progress_bar": False, "validation_metric": "+accuracy", "save_every_num_batches": 1,
                    "keep_checkpoints": 0},
    }


def variant(base: dict, workers: int = 1, tp: int = 1, pp: int = 1, strategy: dict | None = None,
            pipeline: dict | None = None, resumable: bool = False) -> dict:
    """``base`` on ``workers`` processes, ``tp`` x ``pp`` of them per model copy, the same global batch;
    ``resumable``: a checkpoint after every batch (for the resume tests; saving takes time)."""
    config = json.loads(json.dumps(base))
    if not resumable:
        config["trainer"].pop("save_every_num_batches", None)
        config["trainer"]["callbacks"] = []
    data_parallel = max(1, workers // (tp * pp))
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


#: (run name, model, variant arguments); the references are one process (``mlm_one`` and
#: ``classifier_one`` come from the session's ``one_process_references``, shared with test_fsdp.py)
RUNS = {
    "mlm_tp2": ("mlm", {"workers": 2, "tp": 2, "resumable": True}),
    "classifier_tp2": ("classifier", {"workers": 2, "tp": 2}),
    "mlp_one": ("mlp", {}),
    "mlp_pp2_gpipe": ("mlp", {"workers": 2, "pp": 2, "pipeline": {"schedule": "gpipe", "microbatches": 4}}),
    "mlp_pp2_1f1b": ("mlp", {"workers": 2, "pp": 2, "pipeline": {"schedule": "1f1b", "microbatches": 4},
                             "resumable": True}),
    # stage 0 holds only the embeddings: the config's split points instead of the even cut
    "classifier_pp2_gpipe": ("classifier", {"workers": 2, "pp": 2, "pipeline": {"schedule": "gpipe", "microbatches": 2,
                                                                               "split_points": [1]}}),
    "classifier_pp2_1f1b": ("classifier", {"workers": 2, "pp": 2, "pipeline": {"schedule": "1f1b", "microbatches": 4}}),
    # the 2-D layouts, 4 processes each
    "mlm_fsdp2_tp2": ("mlm", {"workers": 4, "tp": 2, "strategy": {"type": "fsdp"}}),
    "mlp_pp2_dp2": ("mlp", {"workers": 4, "pp": 2, "pipeline": {"schedule": "1f1b", "microbatches": 2}}),
}


@pytest.fixture(scope="session")
def mp_runs(tmp_path_factory, one_process_references) -> dict[str, Path]:
    """Every training run of this module, once, through the CLI (the same data for all of a model's runs)."""
    root = tmp_path_factory.mktemp("model_parallel")
    bases = {"mlm": mlm_config(root / "mlm"), "classifier": classifier_config(root / "classifier"),
             "mlp": mlp_config(root / "mlp")}
    runs = {"root": root, **one_process_references}
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
    ("mlp_pp2_gpipe", "mlp_one"),
    ("mlp_pp2_1f1b", "mlp_one"),
    ("classifier_pp2_gpipe", "classifier_one"),
    ("classifier_pp2_1f1b", "classifier_one"),
    ("mlm_fsdp2_tp2", "mlm_one"),
    ("mlp_pp2_dp2", "mlp_one"),
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


def test_the_model_is_split_as_declared(mp_runs):
    log = (mp_runs["mlm_tp2"] / "out_worker0.log").read_text()
    assert "tensor parallel: 12 linear layer(s) split over mesh tp 2 = 2 process(es)" in log
    log = (mp_runs["mlm_fsdp2_tp2"] / "out_worker0.log").read_text()
    assert "tensor parallel: 12 linear layer(s) split over mesh dp_shard 2 x tp 2 = 4 process(es)" in log
    assert "fsdp: 2 shard unit(s) and the root on mesh dp_shard 2 [0, 2]" in log
    log = (mp_runs["classifier_pp2_1f1b"] / "out_worker0.log").read_text()
    assert "pipeline stage 0 of 2: encoder.transformer.embeddings, encoder.transformer.encoder.layer.0" in log
    assert "pipeline stage 1 of 2: encoder.transformer.encoder.layer.1, output" in log
    log = (mp_runs["classifier_pp2_gpipe"] / "out_worker0.log").read_text()
    assert "pipeline stage 1 of 2: encoder.transformer.encoder.layer.0, encoder.transformer.encoder.layer.1, output" in log
    log = (mp_runs["mlp_pp2_dp2"] / "out_worker0.log").read_text()
    assert "pipeline stage 0 of 2: feedforward.layers.0, feedforward.layers.1, feedforward.layers.2" in log


def test_evaluate_under_tensor_and_pipeline_parallel_equals_one_process(mp_runs, tmp_path):
    archive = str(mp_runs["classifier_tp2"] / "model.tar.gz")
    data = str(mp_runs["root"] / "classifier" / "validation.jsonl")
    layouts = {
        "tp2": {"cuda_devices": [-1, -1], "tensor_parallel_size": 2},
        "pp2": {"cuda_devices": [-1, -1], "pipeline_parallel_size": 2,
                "pipeline": {"schedule": "gpipe", "microbatches": 2}},
    }
    outputs = {}
    for name, extra in (("one", []), *((name, ["-o", json.dumps({"distributed": layout})])
                                       for name, layout in layouts.items())):
        outputs[name] = tmp_path / f"{name}.json"
        result = run_cli("evaluate", archive, data, "--output-file", str(outputs[name]), *extra)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
    one = json.loads(outputs["one"].read_text())
    assert "accuracy" in one
    for name in layouts:
        split = json.loads(outputs[name].read_text())
        assert set(split) == set(one), name
        for key in one:
            assert split[key] == pytest.approx(one[key], abs=1e-6), (name, key)


# ------------------------------------------------------------------------------ resuming elsewhere
MID_EPOCH = "epoch_0001_batch_00000001"  # one global batch into the second epoch


def resume_elsewhere(runs: dict[str, Path], source: str, model: str, target: dict, tmp_path: Path) -> Path:
    """``source`` as if stopped at MID_EPOCH (later checkpoints removed), resumed with ``--recover``
    under the ``target`` variant (another layout or world size)."""
    stopped = tmp_path / f"{source}_resumed"
    shutil.copytree(runs[source], stopped)
    for checkpoint in sorted((stopped / "checkpoints").glob("epoch_*")):
        if checkpoint.name > MID_EPOCH:
            shutil.rmtree(checkpoint)
    base = json.loads((runs["root"] / f"{model}_base.json").read_text())
    config = write_config(tmp_path / "target.json", variant(base, resumable=True, **target))
    result = run_cli("train", str(config), "-s", str(stopped), "--recover", *PLUGIN, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"resumed from {MID_EPOCH}" in (stopped / "out_worker0.log").read_text()
    return stopped


@pytest.mark.parametrize("source,model,target,reference", [
    ("mlm_tp2", "mlm", {"workers": 2}, "mlm_one"),   # tensor parallel 2 -> ddp on 2
    ("mlm_tp2", "mlm", {}, "mlm_one"),               # tensor parallel 2 -> 1 process
    ("mlp_pp2_1f1b", "mlp", {}, "mlp_one"),          # pipeline 2 -> 1 process
], ids=["tp2-to-ddp2", "tp2-to-1", "pp2-to-1"])
def test_a_split_run_stopped_mid_epoch_resumes_under_another_layout(mp_runs, tmp_path, source, model, target,
                                                                     reference):
    resumed = resume_elsewhere(mp_runs, source, model, target, tmp_path)
    expected, got = final_metrics(mp_runs[reference]), final_metrics(resumed)
    for key in ("training_loss", "validation_loss"):  # the second epoch's, most of it after the resume
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    assert max_weight_difference(mp_runs[reference], resumed) <= 1e-5


# ------------------------------------------------------------------------------------ validation
def _rejected(tmp_path: Path, config: dict) -> str:
    """Train ``config``: exit 2, no traceback, no data read (no cache, no run folder); the stderr."""
    result = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", str(tmp_path / "run"), *PLUGIN,
                     env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "run").exists()  # no data was read
    return result.stderr


def test_model_parallel_mistakes_are_key_path_errors_before_data_is_read(tmp_path):
    """Every check of the layout, including a model without a plan or units asked to be split."""
    config = variant(mlm_config(tmp_path), workers=3, tp=2, pp=2, pipeline={"microbatches": 1})  # 4 != 3 processes
    config["model"]["config_overrides"] = {"num_attention_heads": 1}
    config["distributed"]["sync"] = {"type": "local_sgd", "sync_every": 2}
    config["distributed"]["tensor_parallel_plan"] = {"encoder.nothing.*": "colwise"}
    stderr = _rejected(tmp_path, config)
    for line in [
        "distributed: the parallel degrees multiply to 4 (pipeline 2 x replicas 1 x shards 1 x tensor 2), not to the 3 processes",
        "distributed.tensor_parallel_size: 2 does not divide the model's num_attention_heads (1)",
        "distributed.tensor_parallel_plan: tensor-parallel pattern 'encoder.nothing.*' matches no module",
        "distributed.sync: a split model (tensor or pipeline parallel) averages gradients every step",
        "distributed.pipeline.microbatches: must be at least the pipeline_parallel_size (2)",
        "distributed.pipeline_parallel_size: model MaskedLanguageModel declares no pipeline units",
        "distributed.pipeline_parallel_size: tensor and pipeline parallelism are not combined yet",
    ]:
        assert line in stderr
    # the feed-forward classifier has pipeline units but no tensor-parallel plan
    config = variant(mlp_config(tmp_path), workers=4, tp=2, pp=2, pipeline={"schedule": "1f1b", "microbatches": 3},
                     strategy={"type": "fsdp"})
    config["model"]["feedforward"] = None  # one unit (the output layer) for 2 stages
    stderr = _rejected(tmp_path, config)
    for line in [
        "distributed.tensor_parallel_size: model FeedForwardClassifier declares no tensor-parallel plan",
        "distributed.strategy: strategy fsdp does not run pipeline stages; use ddp",
        "data_loader.batch_size: 8 samples per data-parallel rank do not divide into distributed.pipeline.microbatches (3)",
        "distributed.pipeline_parallel_size: 2 stages, but the model has only 1 pipeline unit(s) (output)",
    ]:
        assert line in stderr


def test_pipeline_stages_and_microbatches_are_cut_evenly_or_at_the_split_points():
    import torch

    from distrain.distributed.pipeline import microbatch_count, pipeline_problems, stage_units

    assert stage_units(["a", "b", "c", "d", "e"], 2) == [["a", "b", "c"], ["d", "e"]]
    assert stage_units(["a", "b", "c"], 3) == [["a"], ["b"], ["c"]]
    assert stage_units(["a", "b", "c", "d", "e"], 3, [1, 4]) == [["a"], ["b", "c", "d"], ["e"]]

    class Units(torch.nn.Module):
        def pipeline_units(self):
            return ["a", "b", "c", "d"]

    assert pipeline_problems(Units(), 3, [1, 3]) == []
    for bad in ([1], [0, 2], [2, 2], [1, 4], [3, 1]):
        (problem,) = pipeline_problems(Units(), 3, bad)
        assert problem.path == "distributed.pipeline.split_points" and "needs 2 increasing unit indices in [1, 3]" in \
            problem.message, bad
    assert [microbatch_count(batch, 4) for batch in (8, 4, 6, 3, 1)] == [4, 4, 3, 3, 1]
