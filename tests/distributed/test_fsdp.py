"""Sharded data parallelism (``"strategy": {"type": "fsdp"}``) changes where parameters live and
nothing else: trained through the CLI on 2 (and hybrid 2x2 on 4) gloo processes, a tiny BERT MLM and a
tiny transformer classifier end with the weights of one process on the same global batches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import run_cli
from support.configs import write_config
from support.data import sentiment_records, write_jsonl
from support.distributed import final_metrics, max_weight_difference
from support.transformer_fixtures import write_corpus, write_tiny_bert

#: small enough that the whole set of runs takes seconds: hidden 16, 2 layers
TINY = {"hidden_size": 16, "intermediate_size": 32, "num_attention_heads": 2}
GLOBAL_BATCH = 8
PLUGIN = ("--include-package", "recovery_plugins")


def tiny_bert_folder(folder: Path, pretrained: bool) -> Path:
    """The tiny BERT's tokenizer and config (shrunk to TINY); with ``pretrained`` also seeded weights."""
    write_tiny_bert(folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **TINY}))
    if pretrained:
        import torch
        from transformers import AutoConfig, AutoModel

        torch.manual_seed(0)
        AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    return folder


def mlm_config(root: Path) -> dict:
    bert = tiny_bert_folder(root / "bert", pretrained=False)
    return {
        "dataset_reader": {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 24},
        "train_data_path": str(write_corpus(root / "corpus", files=2, sentences=30, seed=3) / "*.txt"),
        "validation_data_path": str(write_corpus(root / "heldout", files=1, sentences=10, seed=4)),
        "model": {"type": "transformer_masked_language_model", "tokenizer_name": str(bert), "config": str(bert), "masking_seed": 5},
        "data_loader": {"batch_size": GLOBAL_BATCH},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adamw", "lr": 0.003}, "grad_norm": 1.0,
                    "progress_bar": False, "save_every_num_batches": 1, "keep_checkpoints": 0,
                    "callbacks": [{"type": "test_kill_switch"}]},
    }


def classifier_config(root: Path) -> dict:
    folder = tiny_bert_folder(root / "bert_pretrained", pretrained=True)
    return {
        "dataset_reader": {"type": "text_classification_json",
                           "tokenizer": {"type": "pretrained_transformer", "model_name": str(folder), "max_length": 12}},
        "train_data_path": str(write_jsonl(root / "train.jsonl", sentiment_records(60, seed=1))),
        "validation_data_path": str(write_jsonl(root / "validation.jsonl", sentiment_records(20, seed=2))),
        "model": {"type": "transformer_classifier", "model_name": str(folder), "pooling": "mean", "dropout": 0.0},
        "data_loader": {"batch_size": GLOBAL_BATCH},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adamw", "lr": 0.003}, "grad_norm": 1.0,
                    "progress_bar": False, "validation_metric": "+accuracy"},
    }


LAYERS = "encoder.transformer.encoder.layer.*"


def variant(base: dict, workers: int = 1, strategy: dict | None = None, accumulation: int = 1,
            checkpointing: bool = False, checkpoint_format: str = "full", **distributed) -> dict:
    """``base`` on ``workers`` processes with the same global batch (split evenly by batch_size)."""
    config = json.loads(json.dumps(base))
    config["data_loader"]["batch_size"] = GLOBAL_BATCH // workers
    config["trainer"]["num_gradient_accumulation_steps"] = accumulation
    config["trainer"]["checkpoint_format"] = checkpoint_format
    if checkpointing:
        config["trainer"]["activation_checkpointing"] = {"modules": [LAYERS]}
    if workers > 1:
        config["distributed"] = {"cuda_devices": [-1] * workers, "strategy": strategy or {"type": "fsdp"}, **distributed}
    return config


HYBRID = {"type": "fsdp", "shard_group_size": 2}
#: (run name, model, variant arguments); references are one process, with and without accumulation.
#: device_weights + accumulation run on the MLM, whose loss is a mean over a varying token count (the
#: harder case for weighting); the classifier runs FSDP with activation checkpointing.
#: (``mlm_one`` and ``classifier_one``, one process each, come from the session's ``one_process_references``)
RUNS = {
    "mlm_one_acc3": ("mlm", {"accumulation": 3}),
    "mlm_fsdp": ("mlm", {"workers": 2}),
    "mlm_fsdp_weighted_acc3": ("mlm", {"workers": 2, "accumulation": 3, "device_weights": [3, 1]}),
    "mlm_hybrid_2x2": ("mlm", {"workers": 4, "strategy": HYBRID}),
    "mlm_fsdp_sharded": ("mlm", {"workers": 2, "checkpoint_format": "sharded"}),
    # the other sources of the resume matrix: ddp (full, sharded) and hybrid sharded
    "mlm_ddp": ("mlm", {"workers": 2, "strategy": {"type": "ddp"}}),
    "mlm_ddp_sharded": ("mlm", {"workers": 2, "strategy": {"type": "ddp"}, "checkpoint_format": "sharded"}),
    "mlm_hybrid_2x2_sharded": ("mlm", {"workers": 4, "strategy": HYBRID, "checkpoint_format": "sharded"}),
    "classifier_fsdp_checkpointed": ("classifier", {"workers": 2, "checkpointing": True}),
}


@pytest.fixture(scope="session")
def fsdp_runs(tmp_path_factory, one_process_references) -> dict[str, Path]:
    """Every run of this module, trained once through the CLI (the same data for all of a model's runs)."""
    root = tmp_path_factory.mktemp("fsdp")
    bases = {"mlm": mlm_config(root / "mlm"), "classifier": classifier_config(root / "classifier")}
    runs = {"root": root, **one_process_references}
    for name, (model, arguments) in RUNS.items():
        out = root / name
        config = write_config(root / f"{name}.json", variant(bases[model], **arguments))
        result = run_cli("train", str(config), "-s", str(out), *PLUGIN, timeout=300)
        assert result.returncode == 0, f"{name}: {result.stderr[-3000:]}"
        runs[name] = out
    (root / "mlm_base.json").write_text(json.dumps(bases["mlm"]))
    return runs


@pytest.mark.parametrize("run,reference", [
    ("mlm_fsdp", "mlm_one"),
    ("mlm_fsdp_weighted_acc3", "mlm_one_acc3"),
    ("mlm_hybrid_2x2", "mlm_one"),
    ("mlm_ddp", "mlm_one"),
    ("mlm_ddp_sharded", "mlm_one"),
    ("mlm_hybrid_2x2_sharded", "mlm_one"),
    ("classifier_fsdp_checkpointed", "classifier_one"),
])
def test_fsdp_matches_one_process(fsdp_runs, run, reference):
    difference = max_weight_difference(fsdp_runs[reference], fsdp_runs[run])
    print(f"{run} vs {reference}: max |weight difference| in model.tar.gz = {difference:.2e}")
    assert difference <= 1e-5
    expected, got = final_metrics(fsdp_runs[reference]), final_metrics(fsdp_runs[run])
    for key in ("training_loss", "validation_loss"):
        assert got[key] == pytest.approx(expected[key], abs=1e-5), key


def test_fsdp_shards_on_the_declared_mesh(fsdp_runs):
    two = (fsdp_runs["mlm_fsdp"] / "out_worker0.log").read_text()
    assert "fsdp: 2 shard unit(s) and the root on mesh dp_shard 2 [0, 1]" in two
    hybrid = (fsdp_runs["mlm_hybrid_2x2"] / "out_worker0.log").read_text()
    assert "on mesh dp_replicate 2 x dp_shard 2 [[0, 1], [2, 3]]" in hybrid


def held_by_rank(run: Path, rank: int) -> dict[str, int]:
    """The state bytes rank ``rank`` of a real run logged after training."""
    import re

    line = re.search(r"rank \d+ holds parameters ([\d,]+) B, gradients ([\d,]+) B, optimizer state ([\d,]+) B",
                     (run / f"out_worker{rank}.log").read_text())
    assert line, f"no state-bytes line in {run}/out_worker{rank}.log"
    return dict(zip(("parameters", "gradients", "optimizer"), (int(g.replace(",", "")) for g in line.groups())))


def predicted_by_check(config: Path, world_size: int) -> dict[str, int]:
    """The state bytes ``distrain check --world-size N`` predicts for rank 0."""
    import re

    result = run_cli("check", str(config), "--world-size", str(world_size), *PLUGIN)
    assert result.returncode == 0, result.stderr[-3000:]
    figures = {}
    for key in ("parameters", "gradients", "optimizer"):
        found = re.search(rf"^    {key}\s+(?:[\d.,]+ \w+ \()?([\d,]+) B", result.stdout, re.MULTILINE)
        assert found, result.stdout
        figures[key] = int(found.group(1).replace(",", ""))
    return figures


@pytest.mark.parametrize("run,world_size", [("mlm_fsdp", 2), ("mlm_hybrid_2x2", 4)])
def test_dry_run_state_bytes_match_what_real_fsdp_ranks_hold(fsdp_runs, run, world_size):
    predicted = predicted_by_check(fsdp_runs["root"] / f"{run}.json", world_size)
    one = held_by_rank(fsdp_runs["mlm_one"], 0)
    for rank in range(world_size):
        held = held_by_rank(fsdp_runs[run], rank)
        print(f"{run} rank {rank}: held {held}, check predicted for rank 0 {predicted}")
        assert held["parameters"] < 0.6 * one["parameters"]  # sharded: about half of one process's
        for key, value in held.items():
            if rank == 0:  # the rank the dry run assembles
                assert value == pytest.approx(predicted[key], rel=0.05), key
            assert value <= predicted[key] * 1.05, key  # rank 0 holds the largest shards


def test_every_sharding_mistake_is_a_key_path_error_before_data_is_read(tmp_path):
    config = variant(mlm_config(tmp_path), workers=2, strategy={
        "type": "fsdp", "shard_group_size": 3, "cpu_offload": True, "units": ["encoder.nothing.*"]})
    config["trainer"]["activation_offloading"] = True
    config["trainer"]["activation_checkpointing"] = {"modules": [LAYERS, "decoder"]}
    result = run_cli("train", str(write_config(tmp_path / "bad.json", config)), "-s", str(tmp_path / "run"), *PLUGIN,
                     env={"DISTRAIN_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    for line in [
        "distributed.strategy.shard_group_size: must divide the 2 data-parallel rank(s)",
        "distributed.strategy.cpu_offload: offloads from CUDA devices to the host; this job runs on the CPU only",
        "distributed.strategy.units: pattern 'encoder.nothing.*' matches no module of the model",
        "trainer.activation_offloading: moves saved activations from CUDA memory to the host",
        "trainer.activation_checkpointing.modules: pattern 'decoder' matches no module of the model",
    ]:
        assert line in result.stderr
    assert "5 problems in the config" in result.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / "run").exists()  # no data was read


def test_options_that_act_on_shards_are_refused_on_one_process():
    """One process has nothing to shard: FSDP would leave the model unwrapped, so these options
    would silently do nothing (the model training in full precision, nothing offloaded)."""
    from distrain.distributed.strategies.fsdp import FullyShardedDataParallelStrategy as FSDP

    options = {"mixed_precision": {"param_dtype": "bfloat16"}, "cpu_offload": True}
    problems = FSDP.problems(options, world_size=1, path="distributed.strategy", uses_cuda=True)
    assert [problem.path for problem in problems] == ["distributed.strategy.cpu_offload",
                                                      "distributed.strategy.mixed_precision"]
    assert "use trainer.use_amp on one process" in str(problems[1])
    assert FSDP.problems(options, world_size=2, path="distributed.strategy", uses_cuda=True) == []


def test_module_patterns_match_whole_name_parts():
    from distrain.modules.selection import deepest_first, matches

    assert matches("encoder.layer.*", "encoder.layer.0")
    assert not matches("encoder.layer.*", "encoder.layer.0.attention")
    assert matches("**.attention", "encoder.layer.0.attention") and matches("**.attention", "attention")
    assert matches("encoder.**", "encoder.layer.0") and not matches("encoder.*", "decoder.layer")
    assert deepest_first(["a", "a.b.c", "a.b"]) == ["a.b.c", "a.b", "a"]


def test_activation_checkpointing_gives_identical_gradients_and_keeps_fewer_activations(tmp_path):
    import torch

    from distrain.data.vocabulary import Vocabulary
    from distrain.models.masked_language_model import MaskedLanguageModel
    from distrain.training.activations import apply_activation_checkpointing

    bert = tiny_bert_folder(tmp_path / "bert", pretrained=False)
    tokens = torch.randint(5, 40, (4, 16))
    sample_id = torch.arange(4)

    def run(checkpointed: bool) -> tuple[dict[str, torch.Tensor], int]:
        torch.manual_seed(0)
        model = MaskedLanguageModel(Vocabulary(), str(bert), config=str(bert), masking_seed=1)
        if checkpointed:
            assert apply_activation_checkpointing(model, [LAYERS]) == [
                "encoder.transformer.encoder.layer.0", "encoder.transformer.encoder.layer.1"]
        saved = 0

        def pack(tensor):
            nonlocal saved
            saved += tensor.numel() * tensor.element_size()
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            loss = model(tokens=tokens, sample_id=sample_id)["loss"]
        loss.backward()
        return {name: param.grad for name, param in model.named_parameters() if param.grad is not None}, saved

    plain, plain_bytes = run(False)
    checkpointed, checkpointed_bytes = run(True)
    print(f"saved activations: {plain_bytes} bytes plain, {checkpointed_bytes} bytes with the 2 layers checkpointed")
    assert plain.keys() == checkpointed.keys()
    assert all(torch.equal(plain[name], checkpointed[name]) for name in plain)  # bit-identical
    assert checkpointed_bytes < plain_bytes


# ------------------------------------------------------------------------------ resuming anywhere
MID_EPOCH = "epoch_0001_batch_00000001"  # one global batch into the second epoch


def resume_elsewhere(runs: dict[str, Path], source: str, target: dict, tmp_path: Path) -> Path:
    """``source`` as if stopped at MID_EPOCH (later checkpoints removed), resumed with ``--recover``
    under the ``target`` variant (another strategy, world size or checkpoint format)."""
    import shutil

    stopped = tmp_path / f"{source}_resumed"
    shutil.copytree(runs[source], stopped)
    for checkpoint in sorted((stopped / "checkpoints").glob("epoch_*")):
        if checkpoint.name > MID_EPOCH:
            shutil.rmtree(checkpoint)
    # a run resumes only on its own data: the shared one-process references have their own copy
    base_root = runs["references_root"] if source == "mlm_one" else runs["root"]
    base = json.loads((base_root / "mlm_base.json").read_text())
    config = write_config(tmp_path / "target.json", variant(base, **target))
    result = run_cli("train", str(config), "-s", str(stopped), "--recover", *PLUGIN, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"resumed from {MID_EPOCH}" in (stopped / "out_worker0.log").read_text()
    return stopped


DDP, FSDP = {"type": "ddp"}, {"type": "fsdp"}
#: the resume matrix, as a covering set: every ordered pair of {ddp, fsdp, hybrid} once, one process to and
#: from the sharded strategies, each source strategy stopped once with a full and once with a sharded
#: checkpoint, and each of full->sharded, sharded->full, full->full, sharded->sharded once (hybrid needs 4
#: ranks, so the 2-rank runs resume under it on 4 and the hybrid runs under the others on 2). The full
#: product (14 resumes) adds no code path these 8 miss and cost CI about two minutes more.
RESUMES = {
    "ddp2-full-to-fsdp4": ("mlm_ddp", {"workers": 4, "strategy": FSDP, "checkpoint_format": "sharded"}),
    "ddp2-sharded-to-hybrid4": ("mlm_ddp_sharded", {"workers": 4, "strategy": HYBRID}),
    "fsdp2-full-to-ddp4": ("mlm_fsdp", {"workers": 4, "strategy": DDP, "checkpoint_format": "sharded"}),
    "fsdp2-sharded-to-hybrid4": ("mlm_fsdp_sharded", {"workers": 4, "strategy": HYBRID, "checkpoint_format": "sharded"}),
    "fsdp2-sharded-to-ddp1": ("mlm_fsdp_sharded", {}),  # ddp on one process: the plain model
    "hybrid4-full-to-fsdp2": ("mlm_hybrid_2x2", {"workers": 2, "strategy": FSDP}),
    "hybrid4-sharded-to-ddp2": ("mlm_hybrid_2x2_sharded", {"workers": 2, "strategy": DDP}),
    "one-full-to-fsdp2": ("mlm_one", {"workers": 2}),
}


@pytest.mark.parametrize("source,target", RESUMES.values(), ids=RESUMES.keys())
def test_a_run_stopped_mid_epoch_resumes_under_another_strategy_and_world_size(fsdp_runs, tmp_path, source, target):
    resumed = resume_elsewhere(fsdp_runs, source, target, tmp_path)
    reference = fsdp_runs["mlm_one"]
    expected, got = final_metrics(reference), final_metrics(resumed)
    for key in ("training_loss", "validation_loss"):  # the second epoch's, most of it after the resume
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key
    assert max_weight_difference(reference, resumed) <= 1e-5


def test_kill_9_under_fsdp_then_recover_is_bitwise_equal(fsdp_runs, tmp_path):
    import os
    import signal
    import subprocess
    import sys

    import torch

    from support.cli import cli_environment
    from support.distributed import archived_weights

    config = fsdp_runs["root"] / "mlm_fsdp_sharded.json"
    killed = tmp_path / "killed"
    process = subprocess.run(
        [sys.executable, "-m", "distrain", "train", str(config), "-s", str(killed), *PLUGIN],
        env=cli_environment({"DISTRAIN_TEST_KILL_AT_STEP": "3"}), capture_output=True, text=True, timeout=300,
        start_new_session=True,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr[-3000:]
    assert not (killed / "model.tar.gz").exists()
    result = run_cli("train", str(config), "-s", str(killed), "--recover", *PLUGIN, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    expected, got = archived_weights(fsdp_runs["mlm_fsdp_sharded"]), archived_weights(killed)
    assert all(torch.equal(expected[name], got[name]) for name in expected)
    drop = lambda metrics: {k: v for k, v in metrics.items() if k != "training_duration"}  # noqa: E731
    assert drop(final_metrics(killed)) == drop(final_metrics(fsdp_runs["mlm_fsdp_sharded"]))


def test_optimizer_state_moves_between_index_and_name_keys():
    import torch

    from distrain.distributed.optimizer_state import is_named, to_indexed, to_named

    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
    rest = [p for n, p in model.named_parameters() if not n.endswith("weight")]
    optimizer = torch.optim.AdamW([{"params": decay}, {"params": rest, "weight_decay": 0.0}])
    model(torch.ones(4, 3)).sum().backward()
    optimizer.step()
    indexed = optimizer.state_dict()
    named = to_named(indexed, optimizer, model)
    assert is_named(named) and not is_named(indexed)
    assert named["param_groups"][0]["params"] == ["0.weight", "1.weight"]
    assert torch.equal(named["state"]["1.bias"]["exp_avg"], indexed["state"][3]["exp_avg"])
    back = to_indexed(named, optimizer, model)
    assert back["param_groups"] == indexed["param_groups"]
    assert all(torch.equal(back["state"][i]["exp_avg_sq"], indexed["state"][i]["exp_avg_sq"]) for i in indexed["state"])


def test_sharded_ranks_fix_the_mmap_threshold_unless_the_user_set_it():
    """glibc's dynamic mmap threshold kept freed gathered layers in a sharded rank's heap (see
    ``distrain.compat.host_memory``); sharded ranks fix it, a user's own setting wins."""
    import os
    import subprocess
    import sys

    from support.cli import cli_environment

    code = "from distrain.compat.host_memory import fix_mmap_threshold; print(fix_mmap_threshold())"
    environment = {k: v for k, v in cli_environment().items() if k != "MALLOC_MMAP_THRESHOLD_"}
    fixed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment)
    users = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=environment | {"MALLOC_MMAP_THRESHOLD_": "65536"})
    assert (fixed.stdout.strip(), users.stdout.strip()) == ("True", "False"), fixed.stderr + users.stderr
    assert os.uname().sysname == "Linux"  # the CI machine: glibc, where this matters


def test_auto_picks_the_fused_kernel_for_dtensor_shards_and_steps_them_like_plain_tensors():
    """FSDP's parameters are DTensors: ``implementation: auto`` runs torch's fused kernel on their shards
    (a per-tensor loop otherwise, an order of magnitude slower on the CPU), and the update equals the
    fused one on plain tensors; a mix of DTensors and plain tensors (tensor parallelism) gets the loop."""
    import subprocess
    import sys

    from support.cli import cli_environment
    from distrain.runtime.worker_process import free_port

    code = """
import sys, torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor
from distrain.optim.optimizers import kernel_options
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0, world_size=1)
mesh = init_device_mesh("cpu", (1,))
torch.manual_seed(0)
start, grad = torch.randn(6, 4), torch.randn(6, 4)
plain = torch.nn.Parameter(start.clone())
sharded = torch.nn.Parameter(distribute_tensor(start.clone(), mesh, [Shard(0)]))
assert kernel_options("auto", [{"params": [plain]}]) == {"fused": True}
assert kernel_options("auto", [{"params": [sharded]}]) == {"fused": True}
assert kernel_options("auto", [{"params": [torch.nn.Parameter(torch.ones(2, dtype=torch.float64), requires_grad=False)]}]) == {"fused": True}
assert kernel_options("auto", [{"params": [torch.nn.Parameter(torch.ones(2, device="meta"))]}]) == {}
assert kernel_options("auto", [{"params": [plain]}, {"params": [sharded]}]) == {}  # tensor parallel's mix
for param, g in ((plain, grad), (sharded, distribute_tensor(grad, mesh, [Shard(0)]))):
    optimizer = torch.optim.AdamW([param], lr=0.1, **kernel_options("auto", [{"params": [param]}]))
    for _ in range(3):
        param.grad = g.clone()
        optimizer.step()
assert torch.equal(plain.detach(), sharded.detach().full_tensor())
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", code, str(free_port())], capture_output=True, text=True,
                            timeout=120, env=cli_environment())
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
